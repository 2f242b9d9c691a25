// Tiers side by side (GET /v1/launch/tiers, the service's own tier table: price, limits, what
// each unlocks); signed in, the current tier (GET /v1/launch/tiers/me) and a button per tier
// that asks before paying from the wallet (POST /v1/launch/tiers/me). docs/tiers.md.

import { get, post } from '../api.js';
import { h, $ } from '../dom.js';
import { time, usd } from '../format.js';
import { busy, confirmDialog, toast } from '../ui.js';

const root = $('#tiers');
const table = $('#tiers-table');
const signedIn = root.dataset.signedIn === 'yes';
const title = (name) => name[0].toUpperCase() + name.slice(1);
const count = (n) => (Number(n) >= 1e9 ? 'unlimited' : Number(n).toLocaleString('en-US'));
const yes = (v) => (v ? 'yes' : 'no');

// The rows of the comparison: label, and how a tier's value reads.
const ROWS = [
  ['Price', (t) => (Number(t.price) ? `${usd(t.price)} USDT / 30 days` : 'free')],
  ['Portfolios', (t) => count(t.portfolios)],
  ['Strategies', (t) => count(t.strategies)],
  ['Python strategies', (t) => yes(t.python_strategies)],
  ['Backtest history', (t) => `${count(t.backtest_history_days)} days`],
  ['Backtests at once', (t) => count(t.backtests_at_once)],
  ['Webhook tokens', (t) => count(t.webhook_tokens)],
  ['Webhook signals a minute', (t) => count(t.webhook_signals_per_min)],
  ['API requests a minute', (t) => count(t.api_requests_per_min)],
  ['Binance-compatible weight a minute', (t) => count(t.fapi_weight_per_min)],
  ['Orders per 10 s / a minute', (t) => `${count(t.fapi_orders_per_10s)} / ${count(t.fapi_orders_per_min)}`],
  ['Leaders you can copy', (t) => count(t.leaders_followed)],
  ['Your followers', (t) => count(t.followers)],
  ['Paid signal subscriptions', (t) => yes(t.paid_signal_subscriptions)],
  ['AI messages a day', (t) => count(t.ai_messages_per_day)],
];

async function load() {
  const [tiers, mine] = await Promise.all([
    get('/v1/launch/tiers', { on401: 'throw' }),
    signedIn ? get('/v1/launch/tiers/me') : null,
  ]);
  const head = table.tHead.rows[0];
  head.replaceChildren(h('th', { scope: 'col' }, 'What you get'),
    ...tiers.map((t) => h('th', { scope: 'col', 'data-tier': t.name, class: mine?.tier === t.name ? 'current' : null },
      title(t.name), mine?.tier === t.name ? h('span', { class: 'muted small' }, ' (yours)') : null)));
  const rows = ROWS.map(([label, show]) => h('tr', {},
    h('th', { scope: 'row' }, label), ...tiers.map((t) => h('td', { 'data-tier': t.name }, show(t)))));
  if (mine) rows.push(h('tr', {}, h('th', { scope: 'row' }, ''), ...tiers.map((t) => h('td', {}, choose(t, mine)))));
  table.tBodies[0].replaceChildren(...rows);
  table.removeAttribute('aria-busy');
  if (mine) {
    const line = $('#tiers-mine');
    line.hidden = false;
    line.textContent = `Your tier: ${title(mine.tier)}${mine.paid_until ? `, paid until ${time(mine.paid_until)}` : ''}. Wallet: ${usd(mine.wallet_balance)} USDT.`;
  }
}

function choose(tier, mine) {
  if (tier.name === mine.tier) return h('span', { class: 'muted' }, 'Current');
  const paid = Number(tier.price) > 0;
  const button = h('button', { type: 'button', class: `btn btn-small ${paid ? 'btn-primary' : ''}`, 'aria-label': `Switch to ${title(tier.name)}` },
    paid ? `Switch to ${title(tier.name)}` : 'Back to free');
  button.addEventListener('click', () => busy(button, async () => {
    const question = paid
      ? `Pay ${usd(tier.price)} USDT from your wallet (${usd(mine.wallet_balance)} USDT) for 30 days of ${title(tier.name)}?`
      : 'Go back to the free tier? The unused part of your paid period is refunded to your wallet.';
    if (!(await confirmDialog(question, paid ? `Pay ${usd(tier.price)} USDT` : 'Back to free', false))) return;
    try {
      await post('/v1/launch/tiers/me', { tier: tier.name });
      toast(`Your tier is now ${title(tier.name)}.`, 'success');
      await load();
    } catch (error) {
      toast(error.message, 'error');
    }
  }));
  return button;
}

load().catch((error) => toast(error.message, 'error'));
