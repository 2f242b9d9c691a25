// Copying and following: start a copy with its risk settings, pause/resume/unfollow, the
// revenue-share history, the portfolios I follow (cancel, resubscribe), all live over the
// `social` WebSocket channel (polling without it). docs/social.md, docs/subscriptions.md.

import { get, post } from '../api.js';
import { fillTable, h, td, $, $$ } from '../dom.js';
import { signedUsd, time, usd } from '../format.js';
import { coalesce, connectLive, every, liveStatus } from '../live.js';
import { copyBody, explain, FormProblem, riskSummary } from '../social/copyform.js';
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

async function load() {
  const [relations, settlements, subscriptions, me] = await Promise.all([
    get('/v1/copy/relations'), get('/v1/copy/settlements'), get('/v1/subscriptions/my'), get('/v1/user').catch(() => null),
  ]);
  const mine = relations.filter((r) => r.role === 'follower');
  fillTable($('#copies-table'), mine.map((r) => h('tr', { 'data-key': r.id },
    td(h('a', { href: `/p/P${String(r.leader_portfolio_id).padStart(7, '0')}` }, String(r.leader_portfolio_id)), '', 'Leader'),
    td(String(r.portfolio_id), '', 'Into'),
    td(r.mode, '', 'Mode'),
    td(riskSummary(r), 'copy-risk', 'Risk settings'),
    td(r.status, 'copy-status', 'Status'),
    td(signedUsd(r.cum_net_pnl), 'num copy-pnl', 'Net PnL'),
    td(usd(r.hwm), 'num', 'High-water mark'),
    td(usd(r.fees_paid), 'num', 'Fees paid'),
    td(copyActions(r), 'actions', '', r.status))));
  const myId = me?.id ?? null;
  fillTable($('#shares-table'), settlements.map((s) => h('tr', { 'data-key': s.id },
    td(time(s.created_at), '', 'When'),
    td(String(s.relation_id), '', 'Copy'),
    td(myId === null ? '—' : s.leader_user_id === myId ? 'earned' : 'paid', 'share-side', 'Side'),
    td(s.reason, '', 'Why'),
    td(signedUsd(s.net_pnl), 'num', 'Net PnL'),
    td(`${usd(s.hwm_before)} → ${usd(s.hwm_after)}`, 'num', 'Mark before → after'),
    td(`${s.pct} %`, 'num', 'Share'),
    td(usd(s.fee), 'num', 'Fee'))));
  fillTable($('#subs-table'), subscriptions.map((s) => h('tr', { 'data-key': s.id },
    td(s.strategy_id !== null
      ? h('a', { href: `/s/S${String(s.strategy_id).padStart(7, '0')}` }, `strategy ${s.strategy_id}`)
      : h('a', { href: `/p/P${String(s.portfolio_id).padStart(7, '0')}` }, String(s.portfolio_id)), '', 'Portfolio'),
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
const DESCRIBE = {
  'copy.filled': (d) => `Copied: ${d.side} ${d.quantity} ${d.symbol} at ${d.price ?? '—'} (leader #${d.leader_order_id}, copy #${d.relation_id})`,
  'copy.skipped': (d) => `Not copied: ${d.symbol}, ${d.reason}${d.detail ? ` — ${d.detail}` : ''} (copy #${d.relation_id})`,
  'copy.ended': (d) => `Copy #${d.relation_id} ended (${d.reason})`,
  'copy.settled': (d) => `Revenue share of copy #${d.relation_id} (${d.reason}): net PnL ${d.net_pnl}, mark ${d.hwm_before} → ${d.hwm_after}, ${d.pct} %: fee ${d.fee} USDT`,
  'subscription.signal': (d) => `Signal from ${d.portfolio_name || `portfolio ${d.portfolio_id}`}: ${d.event || d.side} ${d.symbol}${d.price != null ? ` at ${d.price}` : ''}`,
  'subscription.changed': (d) => `Subscription #${d.subscription_id}: ${d.what.replace('_', ' ')} (${d.status})`,
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

const leader = new URLSearchParams(window.location.search).get('leader');
if (leader && /^[0-9]+$/.test(leader)) $('#follow-leader').value = leader;
syncForm();
loadPortfolios().catch((error) => toast(error.message, 'error'));
get('/v1/market/symbols', { on401: 'throw' })
  .then((list) => { knownSymbols = new Set(list.map((s) => (typeof s === 'string' ? s : s.symbol))); })
  .catch(() => { knownSymbols = null; });
