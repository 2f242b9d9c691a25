// Copying and subscriptions: follow a public portfolio, pause/resume/unfollow, the revenue-share
// settlements, and my subscriptions. docs/social.md, docs/subscriptions.md.

import { get, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { signedUsd, time, usd } from '../format.js';
import { busy, confirmDialog, onSubmit, toast } from '../ui.js';

function action(label, run) {
  const button = h('button', { type: 'button', class: 'btn btn-small' }, label);
  button.addEventListener('click', () => busy(button, async () => {
    try {
      await run();
      await load();
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

async function load() {
  const [relations, settlements, subscriptions] = await Promise.all([
    get('/v1/copy/relations'), get('/v1/copy/settlements'), get('/v1/subscriptions/my'),
  ]);
  const mine = relations.filter((r) => r.role === 'follower');
  fillTable($('#copies-table'), mine.map((r) => h('tr', { 'data-key': r.id },
    td(String(r.leader_portfolio_id), '', 'Leader'),
    td(String(r.portfolio_id), '', 'Into'),
    td(r.mode, '', 'Mode'),
    td(r.status, 'copy-status', 'Status'),
    td(signedUsd(r.cum_net_pnl), 'num', 'Net PnL'),
    td(usd(r.hwm), 'num', 'High-water mark'),
    td(usd(r.fees_paid), 'num', 'Fees paid'),
    td(copyActions(r), '', '', r.status))));
  fillTable($('#shares-table'), settlements.map((s) => h('tr', { 'data-key': s.id },
    td(time(s.created_at), '', 'When'),
    td(String(s.relation_id), '', 'Copy'),
    td(s.reason, '', 'Why'),
    td(signedUsd(s.net_pnl), 'num', 'Net PnL'),
    td(`${usd(s.hwm_before)} → ${usd(s.hwm_after)}`, 'num', 'Mark before → after'),
    td(`${s.pct} %`, 'num', 'Share'),
    td(usd(s.fee), 'num', 'Fee'))));
  fillTable($('#subs-table'), subscriptions.map((s) => h('tr', { 'data-key': s.id },
    td(String(s.portfolio_id), '', 'Portfolio'),
    td(s.tier, '', 'Tier'),
    td(s.cancel_at_period_end ? 'cancelling' : s.status, 'sub-status', 'Status'),
    td(s.channels.join(', '), '', 'Channels'),
    td(s.current_period_end ? time(s.current_period_end) : '—', '', 'Paid until'),
    td(s.status === 'cancelled' || s.cancel_at_period_end ? []
      : [action('Cancel', () => post(`/v1/subscriptions/${s.id}/cancel`))], '', '',
    `${s.status}:${s.cancel_at_period_end}`))));
}

async function loadPortfolios() {
  const portfolios = await get('/v1/portfolios/my');
  $('#follow-portfolio').replaceChildren(
    ...portfolios.map((p) => h('option', { value: p.id }, `${p.name} (${p.code})`)));
}

onSubmit($('#follow-form'), async (data, form) => {
  const mode = data.get('mode');
  const size = String(data.get('size') || '').trim();
  const body = {
    leader_portfolio_id: Number(String(data.get('leader_portfolio_id') || '').trim()),
    portfolio_id: Number(data.get('portfolio_id')),
    mode,
    allocation: String(data.get('allocation') || '').trim(),
  };
  if (mode === 'fixed_amount' && size) body.amount = size;
  if (mode === 'multiplier' && size) body.multiplier = size;
  await post('/v1/copy/relations', body);
  form.reset();
  toast('Copying started: the leader\'s next fills will be copied.', 'success');
  await load();
});

const leader = new URLSearchParams(window.location.search).get('leader');
if (leader && /^[0-9]+$/.test(leader)) $('#follow-leader').value = leader;

Promise.all([load(), loadPortfolios()]).catch((error) => toast(error.message, 'error'));
