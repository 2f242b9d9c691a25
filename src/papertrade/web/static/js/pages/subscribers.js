// The author's subscriber panel: GET /v1/portfolios/{id}/subscribers (owner only), the paid
// tier's price, the copy profit share and the portfolio that receives the profit shares
// (GET /v1/copy/leaders/{id}/terms, owner only). docs/subscriptions.md, docs/social.md.

import { api, get } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { time, usd } from '../format.js';
import { every, liveStatus } from '../live.js';
import { onSubmit, toast } from '../ui.js';

let portfolios = [];
// The receiving portfolio picked but not saved yet: a poll does not undo the pick.
let payoutPicked = false;

const selected = () => Number($('#panel-portfolio').value);
const named = (id) => {
  const p = portfolios.find((q) => q.id === id);
  return p ? `${p.name} (${p.code})` : `portfolio ${id}`;
};

/** The receiving-portfolio choice: every portfolio of mine, the current receiver selected
 * (unless one is picked and not saved yet). The options are rebuilt only when they change, so
 * a poll does not close the list under the pointer. */
function showPayout(terms) {
  const select = $('#payout-select');
  const id = selected();
  const labels = portfolios.map((p) => [String(p.id),
    p.id === id ? `${p.name} (${p.code}), this portfolio` : `${p.name} (${p.code})`]);
  const picked = select.value;
  if (JSON.stringify(labels) !== select.dataset.labels) {
    select.replaceChildren(...labels.map(([value, text]) => h('option', { value }, text)));
    select.dataset.labels = JSON.stringify(labels);
  }
  select.value = payoutPicked && labels.some(([value]) => value === picked)
    ? picked : String(terms.payout_portfolio_id);
  const now = `Now: ${named(terms.payout_portfolio_id)}.`;
  if ($('#payout-current').textContent !== now) $('#payout-current').textContent = now;
}

async function load() {
  const id = selected();
  if (!id) return;
  const [panel, leader, terms] = await Promise.all([
    get(`/v1/portfolios/${id}/subscribers`),
    get(`/v1/copy/leaders/${id}`, { on401: 'throw' }).catch(() => null),
    get(`/v1/copy/leaders/${id}/terms`),
  ]);
  if (!portfolios.some((p) => p.id === terms.payout_portfolio_id)) {
    portfolios = await get('/v1/portfolios/my'); // made since the page loaded
  }
  showPayout(terms);
  const c = panel.counts;
  $('#panel-active').textContent = String(c.active);
  $('#panel-paid').textContent = String(c.paid);
  $('#panel-free').textContent = String(c.free);
  $('#panel-past-due').textContent = String(panel.past_due);
  $('#panel-cancelled').textContent = String(panel.cancelled);
  $('#panel-revenue').textContent = `${usd(panel.revenue)} USDT`;
  $('#panel-churn').textContent = `${(panel.churn * 100).toFixed(1)} %`;
  if (document.activeElement !== $('#price-input')) $('#price-input').value = String(c.price);
  const share = $('#share-input');
  const portfolio = portfolios.find((p) => p.id === id);
  const isPublic = portfolio?.visibility === 'public';
  share.disabled = !isPublic || !leader;
  if (leader && document.activeElement !== share) share.value = String(leader.profit_share_pct);
  $('#panel-visibility').textContent = isPublic
    ? `Public: anyone can subscribe or copy it${leader ? ` (${leader.followers} copying now)` : ''}.`
    : 'Private: only you can follow it. Make it public on its page to let others subscribe and copy.';
  fillTable($('#panel-table'), panel.subscribers.map((s) => h('tr', { 'data-key': `${s.user_id}` },
    td(`user ${s.user_id}`, '', 'Subscriber'),
    td(s.tier, 'panel-tier', 'Tier'),
    td(s.status === 'past_due' ? 'past due' : s.status, 'panel-status', 'Status'),
    td(time(s.since), '', 'Since'),
    td(s.channels.join(', '), '', 'Channels'),
    td(`${usd(s.paid_total)} USDT`, 'num', 'Paid in total'),
    td(s.cancelled_at ? time(s.cancelled_at) : '—', '', 'Cancelled'))));
  $('#panel').hidden = false;
}

const status = liveStatus($('#live-state'), $('#stale-note'));
const poll = every(15000, load, status.track('panel'));

onSubmit($('#price-form'), async (data) => {
  const price = String(data.get('price') || '').trim();
  if (!/^\d+(\.\d{1,6})?$/.test(price) || Number(price) > 100000) {
    throw new Error('The price is an amount of USDT from 0 (free tier only) to 100,000, e.g. 25.');
  }
  await api('PUT', `/v1/portfolios/${selected()}/subscription-price`, { price });
  toast(Number(price) ? `Paid tier: ${price} USDT per 30 days.` : 'Free tier only.', 'success');
  await poll.now();
});

onSubmit($('#share-form'), async (data) => {
  const pct = String(data.get('profit_share_pct') || '').trim();
  if (!/^\d+(\.\d{1,4})?$/.test(pct) || Number(pct) > 30) {
    throw new Error('The profit share is a % from 0 to 30, e.g. 10.');
  }
  await api('PUT', `/v1/copy/leaders/${selected()}`, { profit_share_pct: pct });
  toast(`New copies share ${pct} % of their profit with you.`, 'success');
  await poll.now();
});

$('#payout-select').addEventListener('change', () => {
  payoutPicked = true;
});

onSubmit($('#payout-form'), async (data) => {
  const chosen = Number(data.get('payout_portfolio_id'));
  if (!chosen) throw new Error('Choose the portfolio that receives the profit shares.');
  const id = selected();
  let terms;
  try {
    terms = await api('PUT', `/v1/copy/leaders/${id}`, { payout_portfolio_id: chosen });
  } catch (error) {
    if (error.code !== 'portfolio_not_found') throw error;
    // One of the two is no longer mine (deleted, perhaps in another tab): say which.
    const [leaderName, chosenName] = [named(id), named(chosen)];
    portfolios = await get('/v1/portfolios/my');
    if (!portfolios.some((p) => p.id === id)) {
      throw new Error(`${leaderName} no longer exists (deleted, perhaps in another tab). Nothing was saved: reload the page.`);
    }
    payoutPicked = false;
    await poll.now();
    throw new Error(`${chosenName} no longer exists (deleted, perhaps in another tab), so it cannot receive profit shares. Nothing was saved: choose another portfolio.`);
  }
  payoutPicked = false;
  showPayout(terms);
  toast(`Profit shares of ${named(id)} now go to ${named(terms.payout_portfolio_id)}, from the next settlement on.`, 'success');
});

async function start() {
  status.socket(false);
  portfolios = await get('/v1/portfolios/my');
  $('#panel-none').hidden = portfolios.length > 0;
  $('#panel-portfolio').replaceChildren(
    ...portfolios.map((p) => h('option', { value: p.id }, `${p.name} (${p.code})`)));
  const wanted = new URLSearchParams(location.search).get('portfolio');
  if (wanted && portfolios.some((p) => String(p.id) === wanted)) $('#panel-portfolio').value = wanted;
  $('#panel-portfolio').addEventListener('change', () => {
    payoutPicked = false;
    history.replaceState(null, '', `?portfolio=${selected()}`);
    poll.now();
  });
  await poll.now();
}

start().catch((error) => toast(error.message, 'error'));
