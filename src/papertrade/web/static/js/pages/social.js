// Copying and following: start a copy with its risk settings, pause/resume/unfollow, the
// revenue-share history, the portfolios I follow (cancel, resubscribe), all live over the
// `social` WebSocket channel (polling without it). docs/social.md, docs/subscriptions.md.

import { get, post } from '../api.js';
import { fillTable, h, td, $, $$ } from '../dom.js';
import { num, signedUsd, time, usd } from '../format.js';
import { coalesce, connectLive, every, liveStatus } from '../live.js';
import { copyBody, explain, FormProblem, modeText, portfolioCode, riskSummary } from '../social/copyform.js';
import { busy, confirmDialog, ready, toast } from '../ui.js';

let knownSymbols = null;

function action(label, run) {
  const button = h('button', { type: 'button', class: 'btn btn-small' }, label);
  button.addEventListener('click', () => busy(button, async () => {
    try {
      await run();
      await poll.now();
    } catch (error) {
      toast(error.message, 'error');
    }
  }));
  return button;
}

function copyActions(relation) {
  if (relation.status === 'ended') return [];
  const base = `/v1/copy/relations/${relation.id}`;
  const pause = relation.status === 'paused'
    ? action('Resume', () => post(`${base}/resume`))
    : action('Pause', () => post(`${base}/pause`));
  const unfollow = action('Unfollow', async () => {
    if (await confirmDialog('Stop copying, close the copied positions at market and settle the revenue share?', 'Unfollow')) {
      await post(`${base}/unfollow`, { close_positions: true });
      toast('Unfollowed and settled.', 'success');
    }
  });
  return [pause, ' ', unfollow];
}

function subscriptionActions(s) {
  const again = action('Resubscribe', async () => {
    const target = s.strategy_id !== null ? { strategy_id: s.strategy_id } : { portfolio_id: s.portfolio_id };
    await post('/v1/subscribe', { ...target, tier: s.tier === 'owner' ? 'free' : s.tier, channels: s.channels, events: s.events, symbols: s.symbols });
    toast('Subscribed again.', 'success');
  });
  if (s.status === 'cancelled' || s.cancel_at_period_end) return [again];
  return [action('Cancel', () => post(`/v1/subscriptions/${s.id}/cancel`))];
}

function subscriptionStatus(s) {
  if (s.cancel_at_period_end) return 'cancelling';
  if (s.status === 'past_due') return 'past due';
  return s.status;
}

let copies = new Map(); // relation id → relation, to name a copy by its leader

/** "lead (P0000012)", or the code alone when the name is not known. */
function named(name, code) {
  return name ? `${name} (${code})` : code;
}

/** A copy in words: "the copy of lead (P0000012)" (the leader's side: "copied by P0000003"). */
function copyName(relationId) {
  const r = copies.get(relationId);
  if (!r) return `copy ${relationId}`;
  return r.role === 'follower'
    ? `copy of ${named(r.leader_portfolio_name, r.leader_portfolio_code)}`
    : `${r.portfolio_code} copying ${named(r.leader_portfolio_name, r.leader_portfolio_code)}`;
}

async function load() {
  const [relations, settlements, subscriptions, me] = await Promise.all([
    get('/v1/copy/relations'), get('/v1/copy/settlements'), get('/v1/subscriptions/my'), get('/v1/user').catch(() => null),
  ]);
  const mine = relations.filter((r) => r.role === 'follower');
  copies = new Map(relations.map((r) => [r.id, r]));
  fillTable($('#copies-table'), mine.map((r) => h('tr', { 'data-key': r.id },
    td(h('a', { href: `/p/${r.leader_portfolio_code}` }, named(r.leader_portfolio_name, r.leader_portfolio_code)), 'copy-leader', 'Leader'),
    td(h('a', { href: `/app/portfolios/${r.portfolio_id}` }, named(r.portfolio_name, r.portfolio_code)), 'copy-into', 'Into'),
    td(modeText(r), 'copy-mode', 'Mode'),
    td(riskSummary(r), 'copy-risk', 'Risk settings'),
    td(r.status, 'copy-status', 'Status'),
    td(signedUsd(r.cum_net_pnl), 'num copy-pnl', 'Net PnL'),
    td(usd(r.hwm), 'num', 'High-water mark'),
    td(usd(r.fees_paid), 'num', 'Fees paid'),
    td(copyActions(r), 'actions', '', r.status))));
  const myId = me?.id ?? null;
  fillTable($('#shares-table'), settlements.map((s) => h('tr', { 'data-key': s.id },
    td(time(s.created_at), '', 'When'),
    td(copyName(s.relation_id), '', 'Copy'),
    td(myId === null ? '—' : s.leader_user_id === myId ? 'earned' : 'paid', 'share-side', 'Side'),
    td(REASONS[s.reason] || s.reason, '', 'Why'),
    td(signedUsd(s.net_pnl), 'num', 'Net PnL'),
    td(`${usd(s.hwm_before)} → ${usd(s.hwm_after)}`, 'num', 'Mark before → after'),
    td(`${s.pct} %`, 'num', 'Share'),
    td(usd(s.fee), 'num', 'Fee'))));
  fillTable($('#subs-table'), subscriptions.map((s) => h('tr', { 'data-key': s.id },
    td(s.strategy_id !== null
      ? h('a', { href: `/s/S${String(s.strategy_id).padStart(7, '0')}` }, `Strategy S${String(s.strategy_id).padStart(7, '0')}`)
      : h('a', { href: `/p/${portfolioCode(s.portfolio_id)}` }, portfolioCode(s.portfolio_id)), '', 'Portfolio'),
    td(s.tier, '', 'Tier'),
    td(subscriptionStatus(s), 'sub-status', 'Status'),
    td(s.channels.join(', '), '', 'Channels'),
    td(s.tier === 'paid' ? `${usd(s.price)} USDT` : 'free', 'num', 'Price / 30 days'),
    td(s.current_period_end ? time(s.current_period_end) : '—', '', 'Paid until'),
    td(subscriptionActions(s), 'actions', '', `${s.status}:${s.cancel_at_period_end}`))));
}

async function loadPortfolios() {
  const portfolios = await get('/v1/portfolios/my');
  $('#follow-portfolio').replaceChildren(
    ...portfolios.map((p) => h('option', { value: p.id }, `${p.name} (${p.code})`)));
}

// The size field says what it is for the chosen mode; fixed leverage shows its number.
function syncForm() {
  const mode = $('#follow-mode').value;
  $('#follow-size-label').textContent = {
    fixed_amount: 'Margin per order (USDT)',
    multiplier: 'Multiplier of the leader\'s size (0.1 to 10)',
    fixed_ratio: 'Size: the leader\'s share of its balance, applied to your allocation',
  }[mode];
  $('#follow-size').disabled = mode === 'fixed_ratio';
  const fixed = $('#follow-leverage-mode').value === 'fixed';
  $('#follow-leverage').hidden = !fixed;
  $('#follow-leverage-label').hidden = !fixed;
}
$('#follow-mode').addEventListener('change', syncForm);
$('#follow-leverage-mode').addEventListener('change', syncForm);

function showProblem(form, problem) {
  for (const el of $$('[aria-invalid]', form)) el.removeAttribute('aria-invalid');
  $('.form-error', form).textContent = problem ? problem.message : '';
  const input = problem?.field && form.elements.namedItem(problem.field);
  if (input instanceof HTMLElement) {
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
}

const form = $('#follow-form');
form.addEventListener('submit', (event) => {
  event.preventDefault();
  showProblem(form, null);
  busy(event.submitter || $('button[type="submit"]', form), async () => {
    try {
      const body = copyBody(new FormData(form), knownSymbols);
      await post('/v1/copy/relations', body);
      form.reset();
      syncForm();
      toast('Copying started: the leader\'s next fills will be copied.', 'success');
      await poll.now();
    } catch (error) {
      const problem = error instanceof FormProblem ? error : explain(error);
      showProblem(form, problem instanceof FormProblem ? problem : new FormProblem(null, problem.message));
    }
  });
});
ready(form);

// Live activity: what the `social` channel says, newest first (at most 30 lines).
const REASONS = { unfollow: 'unfollowed', stop: 'the portfolio stop was reached', weekly: 'weekly settlement', deleted: 'an account was deleted' };
const DESCRIBE = {
  'copy.filled': (d) => `Copied: ${d.side} ${num(d.quantity)} ${d.symbol} at ${d.price != null ? num(d.price) : '—'} (${copyName(d.relation_id)})`,
  'copy.skipped': (d) => `Not copied: ${d.symbol}, ${d.reason}${d.detail ? ` — ${d.detail}` : ''} (${copyName(d.relation_id)})`,
  'copy.ended': (d) => `The ${copyName(d.relation_id)} ended (${REASONS[d.reason] || d.reason})`,
  'copy.settled': (d) => `Revenue share of the ${copyName(d.relation_id)} (${REASONS[d.reason] || d.reason}): net PnL ${signedUsd(d.net_pnl)} USDT, mark ${usd(d.hwm_before)} → ${usd(d.hwm_after)}, ${d.pct} %: fee ${usd(d.fee)} USDT`,
  'subscription.signal': (d) => `Signal from ${d.portfolio_name || portfolioCode(d.portfolio_id)}: ${d.event || d.side} ${d.symbol}${d.price != null ? ` at ${num(d.price)}` : ''}`,
  'subscription.changed': (d) => `Your subscription to ${d.strategy_id != null ? `S${String(d.strategy_id).padStart(7, '0')}` : portfolioCode(d.portfolio_id)}: ${d.what.replace('_', ' ')} (${d.status})`,
};

function feed(message) {
  const describe = DESCRIBE[message.type];
  if (!describe) return;
  const list = $('#social-feed');
  list.prepend(h('li', { class: `feed-${message.type.replace('.', '-')}` },
    h('span', { class: 'muted' }, `${time(message.time)} `), describe(message.data)));
  while (list.children.length > 30) list.lastElementChild.remove();
  $('#feed-empty').hidden = true;
}

const status = liveStatus($('#live-state'), $('#stale-note'));
const poll = every(15000, load, status.track('social'));
const reread = coalesce(300, () => poll.now());
connectLive(['social'], (message) => {
  feed(message);
  reread();
}, (state) => {
  status.socket(state === 'open');
  poll.setPeriod(state === 'open' ? 60000 : 15000);
});

// ?leader= (the public page's *Copy this portfolio*) names the leader by id or code: the
// field shows its code, as every page does.
const leader = new URLSearchParams(window.location.search).get('leader');
if (leader && /^[Pp]?[0-9]{1,15}$/.test(leader)) $('#follow-leader').value = portfolioCode(Number(leader.replace(/^[Pp]/, '')));
syncForm();
loadPortfolios().catch((error) => toast(error.message, 'error'));
get('/v1/market/symbols', { on401: 'throw' })
  .then((list) => { knownSymbols = new Set(list.map((s) => (typeof s === 'string' ? s : s.symbol))); })
  .catch(() => { knownSymbols = null; });
