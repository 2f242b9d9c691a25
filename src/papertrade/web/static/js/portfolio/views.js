// Rendering of the portfolio page's data (no fetching here).

import { del, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { equityChart } from '../charts.js';
import { liveReturn, pct, pnlClass, signedUsd, time, usd } from '../format.js';
import { price, qty } from '../instruments.js';
import { confirmDialog, busy, toast } from '../ui.js';
import { OUTCOME_CLASS, intentText } from '../strategy/signals.js';

/** One position of a symbol: hedge mode holds a LONG and a SHORT one (orders name it too). */
export const positionKey = (row) => `${row.symbol}:${row.position_side || 'BOTH'}`;

// What a portfolio's realism profile means for its fills (docs/trading.md "Realism profiles").
const REALISM = {
  mark: ['at the mark', 'every order fills in full at the mark price (a resting limit at its own price), with no slippage.'],
  realistic: ['realistic', 'market orders pay slippage that grows with their size, large limit orders fill in parts, and a 50 ms latency is recorded.'],
};

// The engine notes a funding row as "funding at <time in ms>, rate <rate>" (the API's times are
// milliseconds); people read the time as the page's other time cells show it, the rate in
// percent and the symbol it was paid on.
const FUNDING_NOTE = /^funding at (\d+), rate (-?\d+(?:\.\d+)?)$/;

/** The Detail cell of a ledger row (the Funding and Ledger tabs). */
export function ledgerDetail(row) {
  const funding = row.kind === 'funding' ? String(row.note).match(FUNDING_NOTE) : null;
  if (!funding) return row.note || row.symbol || '—';
  const [, at, rate] = funding;
  return `${row.symbol ? `${row.symbol} ` : ''}funding at ${time(Number(at))}, rate ${pct(rate, 4)}`;
}

export function createViews(root) {
  const id = Number(root.dataset.id);
  let chart = null;
  let lastCurveKey = '';
  const refreshers = [];
  const afterAction = () => refreshers.forEach((fn) => fn());

  const set = (sel, text, cls) => {
    const el = $(sel, root);
    el.textContent = text;
    if (cls !== undefined) el.className = `num ${cls}`;
  };

  function header(portfolio, equity) {
    const title = $('#pf-title', root);
    if (title.textContent !== portfolio.name) {
      title.textContent = portfolio.name;
      title.title = portfolio.name;
      document.title = `${portfolio.name} · Papertrade`;
    }
    $('#pf-visibility', root).textContent = portfolio.visibility;
    const [name, what] = REALISM[portfolio.realism] || [portfolio.realism, ''];
    $('#pf-realism-name', root).textContent = name;
    $('#pf-realism-what', root).textContent = what ? `— ${what}` : '';
    const ret = liveReturn(equity); // time-weighted: a top-up is not a return
    set('#stat-equity', `${usd(equity.equity)} USDT`, '');
    set('#stat-return', pct(ret), pnlClass(ret, 4));
    set('#stat-upnl', signedUsd(equity.unrealized_pnl), pnlClass(equity.unrealized_pnl));
    set('#stat-balance', usd(equity.balance), '');
    set('#stat-available', usd(equity.available), '');
    set('#stat-margin', usd(equity.margin_used), '');
    // Cross margin: the account is liquidated when maintenance margin reaches equity (100 %).
    const ratio = Number(equity.equity) > 0 && Number(equity.maintenance_margin) > 0
      ? Number(equity.maintenance_margin) / Number(equity.equity) : null;
    set('#stat-ratio', ratio === null ? '—' : `${(ratio * 100).toFixed(2)}%`, ratio !== null && ratio > 0.8 ? 'down' : '');
  }

  /** Open positions with their TP/SL (`exits`: open conditional orders by positionKey) and the
   * account's margin ratio. Close opens the partial / limit close dialog. */
  function positions(rows, exits = new Map()) {
    $('#count-positions', root).textContent = rows.length ? String(rows.length) : '';
    const phoneCount = $('#phone-count-positions', root);
    if (phoneCount) phoneCount.textContent = rows.length ? String(rows.length) : '';
    $('#close-all', root).hidden = rows.length === 0;
    fillTable($('#positions-table', root), rows.map((p) => {
      const close = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Close ${p.symbol} position` }, 'Close');
      close.addEventListener('click', () => handlers.close?.(p));
      const edit = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Set take-profit and stop-loss of ${p.symbol}` }, 'TP/SL');
      edit.addEventListener('click', () => handlers.tpsl?.(p, exits.get(positionKey(p)) || {}));
      // ROE as exchanges show it: against the margin the entry took (entry value / leverage).
      const entryMargin = Math.abs(Number(p.quantity)) * Number(p.entry_price) / Number(p.leverage);
      const roe = entryMargin ? Number(p.unrealized_pnl) / entryMargin : null;
      const own = exits.get(positionKey(p)) || {};
      const tpsl = `${own.tp ? price(p.symbol, own.tp.trigger_price) : '—'} / ${own.sl ? price(p.symbol, own.sl.trigger_price) : '—'}`;

      return h('tr', { 'data-key': positionKey(p), 'data-symbol': p.symbol, 'data-position-side': p.position_side },
        td(h('a', { href: `/markets/${p.symbol}` }, p.symbol), '', 'Symbol'),
        td(h('span', { class: `side ${p.side}` }, `${p.side} ${p.leverage}×`), '', 'Side'),
        td(qty(p.symbol, Math.abs(p.quantity)), 'num', 'Size'),
        td(price(p.symbol, p.entry_price), 'num', 'Entry'),
        td(price(p.symbol, p.mark_price), 'num mark', 'Mark'),
        td(usd(Math.abs(Number(p.quantity) * Number(p.mark_price))), 'num notional', 'Notional'),
        td(signedUsd(p.unrealized_pnl), `num upnl ${pnlClass(p.unrealized_pnl)}`, 'Unrealized PnL'),
        td(pct(roe), `num roe ${pnlClass(roe, 4)}`, 'ROE'),
        td(p.liquidation_price ? price(p.symbol, p.liquidation_price) : '—', 'num', 'Liq. price'),
        td(usd(p.margin), 'num', 'Margin'),
        td(tpsl, 'tpsl', 'TP / SL'),
        td(h('span', { class: 'row-actions' }, edit, close), 'actions', '', `close:${p.quantity}:${tpsl}`));
    }));
  }

  /** Every order that no longer rests, with why it ended and who placed it (you, a stop, a
   * take-profit, the liquidation engine, copy trading, a strategy, a signal); and the stops,
   * take-profits and trailing stops that ended without placing one (cancelled, rejected,
   * expired), with their reason. `stops`: the closed conditional orders. */
  function history(rows, stops = []) {
    const byId = new Map(stops.map((c) => [c.id, c]));
    const ordered = rows.map((o) => ({ at: o.updated_at || o.created_at, id: o.id, row: orderRow(o, byId.get(o.conditional_id)) }));
    for (const c of stops) {
      if (c.status === 'triggered') continue; // its order's row says so
      ordered.push({ at: c.updated_at || c.created_at, id: c.id, row: stopRow(c) });
    }
    ordered.sort((a, b) => b.at - a.at || b.id - a.id);
    fillTable($('#history-table', root), ordered.map((o) => o.row));
    historyOrders.clear();
    for (const o of rows) historyOrders.set(o.id, o);
  }
  const historyOrders = new Map(); // what the fills table reads "Placed by" from

  function orderRow(o, stop) {
    return h('tr', { 'data-key': o.id, 'data-order-id': o.id, 'data-placed-by': o.placed_by || 'you' },
      td(time(o.created_at), '', 'Time'),
      td(o.symbol, '', 'Symbol'),
      td(h('span', { class: `side ${o.side === 'buy' ? 'long' : 'short'}` }, o.action === 'close' ? `${o.side} (close)` : o.side), '', 'Side'),
      td(o.type, '', 'Type'),
      td(Number(o.avg_price) ? price(o.symbol, o.avg_price) : o.price ? price(o.symbol, o.price) : 'market', 'num', 'Price'),
      td(`${qty(o.symbol, o.filled_quantity)} / ${qty(o.symbol, o.quantity)}`, 'num', 'Filled / quantity'),
      td(placedBy(o, stop), 'wrap placed-by', 'Placed by'),
      td(h('span', { class: `outcome outcome-${o.status}` }, o.status.replaceAll('_', ' ')), '', 'Status'),
      td(o.reason || '—', 'wrap', 'Reason'));
  }

  /** A stop that ended without an order: its kind, trigger, and why it ended. */
  function stopRow(c) {
    const kind = c.type.replaceAll('_', ' ');
    const trigger = c.trigger_price ? price(c.symbol, c.trigger_price) : `${c.callback_rate} % callback`;
    return h('tr', { 'data-key': `c${c.id}`, 'data-conditional-id': c.id },
      td(time(c.updated_at || c.created_at), '', 'Time'),
      td(c.symbol, '', 'Symbol'),
      td(h('span', { class: `side ${c.side === 'buy' ? 'long' : 'short'}` }, c.reduce_only || c.close_position ? `${c.side} (close)` : c.side), '', 'Side'),
      td(kind, '', 'Type'),
      td(`trigger ${trigger}`, 'num', 'Price'),
      td(c.close_position ? 'whole position' : qty(c.symbol, c.quantity), 'num', 'Filled / quantity'),
      td(stopWords(c), 'wrap placed-by', 'Placed by'),
      td(h('span', { class: `outcome outcome-${c.status}` }, c.status.replaceAll('_', ' ')), '', 'Status'),
      td(c.reason || '—', 'wrap', 'Reason'));
  }

  const stopWords = (c) => {
    const closing = c.reduce_only || c.close_position;
    const what = c.type.startsWith('take_profit') ? 'take-profit' : c.type.startsWith('trailing') ? 'trailing stop' : closing ? 'stop-loss' : 'stop';
    return `your ${what}`;
  };

  /** "you", or who placed it and, for a stop, at what trigger. */
  function placedBy(o, stop) {
    if (!o.placed_by) return 'you';
    if (stop?.trigger_price) return `${o.placed_by} at ${price(o.symbol, stop.trigger_price)}`;
    return o.placed_by;
  }

  const ledgerKind = (kind) => String(kind).replaceAll('_', ' ');
  function ledger(rows) {
    const entry = (row, withKind) => h('tr', { 'data-key': row.id },
      td(time(row.created_at), '', 'Time'),
      ...(withKind ? [td(ledgerKind(row.kind), '', 'Kind')] : []),
      td(ledgerDetail(row), 'wrap', 'Detail'),
      td(signedUsd(row.amount), `num ${pnlClass(row.amount)}`, 'Amount'),
      td(usd(row.balance_after), 'num', 'Balance after'));
    fillTable($('#ledger-table', root), rows.map((r) => entry(r, true)));
    fillTable($('#funding-table', root), rows.filter((r) => r.kind === 'funding').map((r) => entry(r, false)));
  }

  function orders(rows) {
    $('#count-orders', root).textContent = rows.length ? String(rows.length) : '';
    fillTable($('#orders-table', root), rows.map((o) => {
      const cancel = h('button', { type: 'button', class: 'btn btn-small' }, 'Cancel');
      cancel.setAttribute('aria-label', `Cancel ${o.side} ${o.symbol} order at ${price(o.symbol, o.price)}`);
      cancel.addEventListener('click', () => busy(cancel, async () => {
        try {
          await del(`/v1/order/${o.id}`);
          toast('Order cancelled.', 'success');
          afterAction();
        } catch (error) {
          toast(error.message, 'error');
        }
      }));
      return h('tr', { 'data-key': o.id, 'data-order-id': o.id },
        td(time(o.created_at), '', 'Time'),
        td(o.symbol, '', 'Symbol'),
        td(h('span', { class: `side ${o.side === 'buy' ? 'long' : 'short'}` }, o.action === 'close' ? `${o.side} (close)` : o.side), '', 'Side'),
        td(`${o.type} ${o.time_in_force}`, '', 'Type'),
        td(price(o.symbol, o.price), 'num', 'Price'),
        td(qty(o.symbol, o.quantity), 'num', 'Quantity'),
        td(qty(o.symbol, o.filled_quantity), 'num', 'Filled'),
        td(cancel, 'actions', '', `cancel:${o.id}`));
    }));
  }

  /** Open conditional orders (stops, take-profits, trailing stops) waiting for their trigger. */
  function stops(rows) {
    fillTable($('#stops-table', root), rows.map((c) => {
      const kind = c.type.replaceAll('_', ' ');
      const trigger = c.trigger_price ? price(c.symbol, c.trigger_price) : `${c.callback_rate} % callback`;
      const cancel = h('button', { type: 'button', class: 'btn btn-small' }, 'Cancel');
      cancel.setAttribute('aria-label', `Cancel ${kind} ${c.side} ${c.symbol} at ${trigger}`);
      cancel.addEventListener('click', () => busy(cancel, async () => {
        try {
          await del(`/v1/conditional-order/${c.id}`);
          toast(`${kind} order cancelled.`, 'success');
          afterAction();
        } catch (error) {
          toast(error.message, 'error');
        }
      }));
      return h('tr', { 'data-key': c.id, 'data-conditional-id': c.id },
        td(time(c.created_at), '', 'Time'),
        td(c.symbol, '', 'Symbol'),
        td(h('span', { class: `side ${c.side === 'buy' ? 'long' : 'short'}` }, c.reduce_only || c.close_position ? `${c.side} (close)` : c.side), '', 'Side'),
        td(kind, 'kind', 'Type'),
        td(trigger, 'num trigger', 'Trigger'),
        td(c.price ? price(c.symbol, c.price) : 'market', 'num limit', 'Limit price'),
        td(c.close_position ? 'whole position' : qty(c.symbol, c.quantity), 'num', 'Quantity'),
        td(cancel, 'actions', '', `cancel:${c.id}`));
    }));
  }

  // Why a fill has its price (GET /v1/portfolios/{id}/fills, docs/trading.md "Realism"): a short
  // line under the price, the whole explanation in its title. Fills from before it was recorded
  // have no price_source and show nothing.
  function fillWhy(f) {
    if (!f.price_source) return null;
    const fee = `fee ${(Number(f.fee_rate) * 100).toFixed(3)} % ${f.liquidity}`;
    const short = f.price_source === 'limit'
      ? 'limit price'
      : (Number(f.slippage_bps) ? `mark +${Number(f.slippage_bps).toFixed(2)} bps` : 'at mark');
    const title = [
      `price from the ${f.price_source === 'limit' ? 'limit price' : 'mark'}`,
      f.mark_price != null ? `mark then ${price(f.symbol, f.mark_price)}` : '',
      `slippage ${Number(f.slippage_bps || 0).toFixed(2)} bps (${usd(f.slippage || 0)})`,
      fee,
      f.latency_ms ? `latency ${f.latency_ms} ms (declared, not waited)` : '',
    ].filter(Boolean).join(' · ');
    return h('span', { class: 'muted small fill-why', title, 'data-why': f.price_source }, short);
  }

  /** Who placed a fill's order, from the order history (a liquidation says so by itself). */
  function fillPlacedBy(f) {
    if (f.is_liquidation) return 'liquidation';
    const order = historyOrders.get(f.order_id);
    return order ? order.placed_by || 'you' : '—';
  }

  function fills(rows) {
    fillTable($('#fills-table', root), rows.map((f) => [f, fillWhy(f)]).map(([f, why]) => h('tr', { 'data-key': f.id },
      td(time(f.created_at), '', 'Time'),
      td(f.symbol, '', 'Symbol'),
      td(h('span', { class: `side ${f.side === 'buy' ? 'long' : 'short'}` }, f.is_liquidation ? `${f.side} (liquidation)` : f.side), '', 'Side'),
      td([price(f.symbol, f.price), why ? h('br') : null, why], 'num', 'Price'),
      td(qty(f.symbol, f.quantity), 'num', 'Quantity'),
      td(usd(f.quote_quantity), 'num', 'Value'),
      td(`${usd(f.commission)} (${f.liquidity})`, 'num', 'Commission'),
      td(signedUsd(f.realized_pnl), `num ${pnlClass(f.realized_pnl)}`, 'Realized PnL'),
      td(fillPlacedBy(f), 'wrap placed-by', 'Placed by'))));
  }

  // A signal of GET /v1/portfolios/{id}/signals: raw body, status, error code, message, orders.
  const signalText = (s) => String(s.body ?? '');
  const signalOutcome = (s) => String(s.status ?? '');
  function signalDetail(s) {
    const parts = [];
    if (s.msg) parts.push(s.msg);
    if (s.order_ids?.length) parts.push(`order${s.order_ids.length > 1 ? 's' : ''} #${s.order_ids.join(', #')}`);
    if (s.duplicate_of) parts.push(`duplicate of signal #${s.duplicate_of}`);
    return parts.join(' · ') || '—';
  }

  // A signal of a strategy deployed here (GET …/strategy-signals): marked with its strategy.
  const strategyRow = (s) => h('tr', { 'data-key': `strategy-${s.id}`, 'data-strategy-signal-id': s.id },
    td(time(s.time), '', 'Time'),
    td([
      h('span', { class: 'badge badge-strategy' }, 'Strategy'), ' ',
      h('a', { href: `/app/strategies/${s.strategy_id}` }, s.strategy_name), ' ',
      h('span', { class: 'muted code' }, `${s.strategy_code} v${s.version}`),
      h('div', { class: 'wrap small' }, s.rule || '—'),
    ], '', 'Signal'),
    td(h('span', { class: `outcome ${OUTCOME_CLASS[s.outcome] || ''}` }, s.outcome), '', 'Outcome'),
    td([intentText(s.intent), s.reason ? ` · ${s.reason}` : '', s.order_id ? ` · order #${s.order_id}` : ''].join(''), 'wrap', 'Detail'));

  function signals(rows, strategyRows = []) {
    const alerts = rows.map((s) => [s.received_at, h('tr', { 'data-key': s.id, 'data-signal-id': s.id },
      td(time(s.received_at), '', 'Time'),
      td(h('code', { class: 'wrap' }, signalText(s)), '', 'Signal'),
      td(h('span', { class: `outcome outcome-${signalOutcome(s)}` }, signalOutcome(s)), '', 'Outcome'),
      td(signalDetail(s), 'wrap', 'Detail'))]);
    const fromStrategies = strategyRows.map((s) => [s.time, strategyRow(s)]);
    fillTable($('#signals-table', root), [...alerts, ...fromStrategies].sort((a, b) => b[0] - a[0]).map(([, row]) => row));
    const last = $('#last-signals', root);
    last.replaceChildren(...(rows.length ? rows.slice(0, 5).map((s) => h('li', {},
      h('span', { class: `outcome outcome-${signalOutcome(s)}` }, signalOutcome(s)), ' ',
      h('code', { class: 'wrap' }, signalText(s)), ' ',
      h('span', { class: 'muted' }, time(s.received_at)),
      s.msg ? h('div', { class: 'muted small' }, s.msg) : null)) : [h('li', { class: 'muted' }, 'None yet.')]));
  }

  /** The recorded equity marks, then the live equity of each refresh since the last mark. */
  function curve(points, latest, portfolio, redraw = false) {
    chart ??= equityChart($('#equity-chart', root));
    if (redraw) lastCurveKey = '';
    const key = points.length ? `${points.length}:${points[points.length - 1].time}` : 'none';
    if (key !== lastCurveKey) {
      lastCurveKey = key;
      const all = points.map((p) => ({ time: p.time, equity: p.equity }));
      if (!all.length) all.push({ time: portfolio.created_at, equity: portfolio.initial_balance });
      if (latest) all.push(latest);
      chart.setPoints(all);
    } else if (latest) {
      chart.addPoint(latest);
    }
  }

  const handlers = {};
  return {
    header, positions, orders, stops, history, ledger, fills, signals, curve, positionKey,
    /** What the Close and TP/SL buttons of a position row do. */
    on(name, fn) {
      handlers[name] = fn;
    },
    onAction(fn) {
      refreshers.push(fn);
    },
    confirm: confirmDialog,
  };
}
