// The author's subscriber panel: GET /v1/portfolios/{id}/subscribers (owner only), the paid
// tier's price and the copy profit share. docs/subscriptions.md, docs/social.md.

import { api, get } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { time, usd } from '../format.js';
import { every, liveStatus } from '../live.js';
import { onSubmit, toast } from '../ui.js';

let portfolios = [];

const selected = () => Number($('#panel-portfolio').value);

async function load() {
  const id = selected();
  if (!id) return;
  const [panel, leader] = await Promise.all([
    get(`/v1/portfolios/${id}/subscribers`),
    get(`/v1/copy/leaders/${id}`, { on401: 'throw' }).catch(() => null),
  ]);
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

async function start() {
  status.socket(false);
  portfolios = await get('/v1/portfolios/my');
  $('#panel-none').hidden = portfolios.length > 0;
  $('#panel-portfolio').replaceChildren(
    ...portfolios.map((p) => h('option', { value: p.id }, `${p.name} (${p.code})`)));
  const wanted = new URLSearchParams(location.search).get('portfolio');
  if (wanted && portfolios.some((p) => String(p.id) === wanted)) $('#panel-portfolio').value = wanted;
  $('#panel-portfolio').addEventListener('change', () => {
    history.replaceState(null, '', `?portfolio=${selected()}`);
    poll.now();
  });
  await poll.now();
}

start().catch((error) => toast(error.message, 'error'));
