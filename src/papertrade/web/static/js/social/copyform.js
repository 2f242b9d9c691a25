// The copy-relation form: its body for POST /v1/copy/relations, checked first in plain
// language (the same bounds as the API, docs/social.md), and the API's own refusals said the
// same way. Each problem names the field it is about, so the page can mark it.

const DECIMAL = /^\d+(\.\d{1,6})?$/;

function amount(text, min, max) {
  if (!DECIMAL.test(text)) return null;
  const value = Number(text);
  return value >= min && value <= max ? value : null;
}

export class FormProblem extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/** The portfolio id a code names ("P0000012", "p12"; bare digits too), or null. */
export function leaderId(text) {
  const digits = String(text).trim().match(/^[Pp]?(\d{1,15})$/)?.[1];
  return digits && Number(digits) >= 1 ? Number(digits) : null;
}

/** A portfolio's code from its id, as every page shows it. */
export function portfolioCode(id) {
  return `P${String(id).padStart(7, '0')}`;
}

/** What the copy modes are, in words. */
export const MODES = {
  fixed_amount: 'Fixed amount',
  fixed_ratio: 'Fixed ratio',
  multiplier: 'Multiplier',
};

/** A relation's mode in words, with its size ("Fixed amount: 5 USDT margin per order"). */
export function modeText(r) {
  if (r.mode === 'fixed_amount' && r.amount != null) return `Fixed amount: ${r.amount} USDT margin per order`;
  if (r.mode === 'multiplier' && r.multiplier != null) return `Multiplier: ${r.multiplier}× the leader's size`;
  if (r.mode === 'fixed_ratio') return 'Fixed ratio: the leader\'s share of its balance';
  return MODES[r.mode] || r.mode;
}

/** The request body of the form's values, or a FormProblem saying what to fix. */
export function copyBody(values, knownSymbols = null) {
  const text = (name) => String(values.get(name) ?? '').trim();
  const leader = leaderId(text('leader_portfolio_id'));
  if (leader === null) {
    throw new FormProblem('leader_portfolio_id', 'Enter the leader portfolio\'s code, as its page shows it (e.g. P0000012).');
  }
  const mode = text('mode');
  const body = { leader_portfolio_id: leader, portfolio_id: Number(text('portfolio_id')), mode };
  if (!body.portfolio_id) throw new FormProblem('portfolio_id', 'Choose one of your portfolios to receive the copies (create one first).');
  const size = text('size');
  if (mode === 'fixed_amount') {
    if (amount(size, 0.000001, 200000) === null) {
      throw new FormProblem('size', 'Margin per order: an amount of USDT above 0 and at most 200,000 (e.g. 100).');
    }
    body.amount = size;
  } else if (mode === 'multiplier') {
    if (!/^\d+(\.\d{1,4})?$/.test(size) || Number(size) < 0.1 || Number(size) > 10) {
      throw new FormProblem('size', 'Multiplier: a number from 0.1 to 10 (1 copies the leader\'s size).');
    }
    body.multiplier = size;
  }
  const allocation = text('allocation');
  if (amount(allocation, 10, 200000) === null) {
    throw new FormProblem('allocation', 'Allocation: how much of your portfolio backs this copy, from 10 to 200,000 USDT.');
  }
  body.allocation = allocation;
  if (text('leverage_mode') === 'fixed') {
    const leverage = text('leverage');
    if (!/^\d{1,3}$/.test(leverage) || Number(leverage) < 1 || Number(leverage) > 125) {
      throw new FormProblem('leverage', 'Fixed leverage: a whole number from 1 to 125, or choose to follow the leader\'s.');
    }
    body.leverage = Number(leverage);
  } // else the API's default: "follow" the leader's leverage
  const cap = text('max_order_margin');
  if (cap) {
    if (amount(cap, 0.000001, 200000) === null) {
      throw new FormProblem('max_order_margin', 'Max margin per order: an amount of USDT above 0 and at most 200,000, or leave it empty for no cap.');
    }
    body.max_order_margin = cap;
  }
  const stop = text('stop_pct');
  if (stop) {
    if (!/^\d+(\.\d{1,4})?$/.test(stop) || Number(stop) <= 0 || Number(stop) >= 100) {
      throw new FormProblem('stop_pct', 'Portfolio stop: a loss in % of the allocation above 0 and below 100 (e.g. 20 ends the copy after losing 20 %), or leave it empty.');
    }
    body.stop_pct = stop;
  }
  const slippage = text('slippage_pct');
  if (slippage) {
    if (!/^\d+(\.\d{1,4})?$/.test(slippage) || Number(slippage) <= 0 || Number(slippage) > 1.5) {
      throw new FormProblem('slippage_pct', 'Slippage cap: it can only be lowered, so a % above 0 and at most 1.5 (0.5 is the cap for BTC and ETH).');
    }
    body.slippage_pct = slippage;
  }
  const symbols = text('symbols').toUpperCase().split(/[\s,]+/).filter(Boolean);
  const bad = symbols.find((s) => !/^[A-Z0-9]{1,30}$/.test(s) || (knownSymbols && !knownSymbols.has(s)));
  if (bad) {
    throw new FormProblem('symbols', `Symbols: ${bad} is not a market here. Write names like BTCUSDT, separated by commas, or leave it empty to copy every symbol.`);
  }
  if (symbols.length > 50) throw new FormProblem('symbols', 'Symbols: at most 50.');
  body.symbols = [...new Set(symbols)];
  return body;
}

const REFUSALS = {
  copy_exists: ['portfolio_id', 'This portfolio already copies that leader. Choose another portfolio, or unfollow first.'],
  copy_invalid: ['portfolio_id', 'A portfolio cannot copy itself: choose another portfolio to receive the copies.'],
  copy_limit: ['leader_portfolio_id', 'You copy 20 leaders already, the most allowed. Unfollow one first.'],
  portfolio_not_found: ['leader_portfolio_id', 'No public portfolio has this code (it may be private or deleted).'],
  tier_limit: ['leader_portfolio_id', 'Your plan does not allow another copy; see the Wallet page for plans.'],
};

// The API's field names (in a validation_error's message) → the form's fields and labels.
const FIELDS = {
  amount: ['size', 'Margin per order'], multiplier: ['size', 'Multiplier'],
  allocation: ['allocation', 'Allocation'], leverage: ['leverage', 'Fixed leverage'],
  max_order_margin: ['max_order_margin', 'Max margin per order'],
  stop_pct: ['stop_pct', 'Portfolio stop'], slippage_pct: ['slippage_pct', 'Slippage cap'],
  symbols: ['symbols', 'Symbols'], leader_portfolio_id: ['leader_portfolio_id', 'Leader portfolio'],
  portfolio_id: ['portfolio_id', 'Your portfolio'],
};

/** An API refusal of the form as a FormProblem in plain language (others stay as they are). */
export function explain(error) {
  const known = REFUSALS[error.code];
  if (known) return new FormProblem(known[0], known[1]);
  if (error.code === 'validation_error') {
    const name = String(error.message).match(/^([a-z_]+)[.:]/)?.[1];
    if (name && FIELDS[name]) {
      const [field, label] = FIELDS[name];
      const why = String(error.message).replace(/^[a-z_.0-9]+: (Value error, )?/, '').split(';')[0];
      return new FormProblem(field, `${label}: ${why}`);
    }
  }
  return error;
}

/** Risk settings of a relation, in words, for the table. */
export function riskSummary(r) {
  const parts = [r.leverage === 'follow' ? 'leader\'s leverage' : `${r.leverage}x`];
  if (r.max_order_margin !== null) parts.push(`≤ ${r.max_order_margin} USDT margin/order`);
  if (r.stop_pct !== null) parts.push(`stop at −${r.stop_pct} %`);
  if (r.slippage_pct !== null) parts.push(`slippage ≤ ${r.slippage_pct} %`);
  parts.push(r.symbols.length ? r.symbols.join(', ') : 'all symbols');
  return parts.join(' · ');
}
