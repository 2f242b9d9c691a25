// Wallet: balance and tier, USDT-TRC20 recharge orders (the chosen pending one with its exact
// amount, address, QR code and countdown; every order listed with its state, pending first, so a
// reload finds them again; polled until paid), transfers with portfolios, history.
// docs/wallet.md, docs/tiers.md.

import { get, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { countdown, signedUsd, time, usd } from '../format.js';
import { busy, confirmDialog, onSubmit, toast, wireCopyButtons } from '../ui.js';

let orders = []; // the caller's recharge orders, pending first
let shown = null; // the id of the order in the "send exactly" box
let ticks = 0;

const STATUS_WORDS = { paid_late: 'paid late' };
const statusWord = (status) => STATUS_WORDS[status] || status;

async function loadWallet() {
  const [wallet, tier, ledger] = await Promise.all([
    get('/v1/user/wallet'), get('/v1/launch/tiers/me'), get('/v1/user/wallet/ledger?limit=100'),
  ]);
  $('#wallet-balance').textContent = usd(wallet.balance);
  $('#tier-name').textContent = tier.tier;
  $('#tier-until').textContent = tier.paid_until ? `until ${time(tier.paid_until)}` : '';
  fillTable($('#wallet-ledger'), ledger.map((row) => h('tr', { 'data-key': row.id },
    td(time(row.created_at), '', 'When'),
    td(row.kind, '', 'Kind'),
    td(signedUsd(row.amount), 'num', 'Amount'),
    td(usd(row.balance_after), 'num', 'Balance'),
    td(row.note || '—', '', 'Note'))));
}

async function loadPortfolios() {
  const portfolios = await get('/v1/portfolios/my');
  const select = $('#transfer-portfolio');
  select.replaceChildren(...portfolios.map((p) => h('option', { value: p.id }, `${p.name} (${p.code})`)));
}

function showOrder(order) {
  shown = order.id;
  $('#recharge-order').hidden = false;
  $('#pay-amount').value = String(order.pay_amount);
  $('#pay-address').value = order.address;
  const qr = `/v1/recharge/orders/${order.id}/qr.svg`;
  if ($('#recharge-qr').getAttribute('src') !== qr) $('#recharge-qr').setAttribute('src', qr);
  $('#recharge-status').textContent = statusWord(order.status);
  $('#recharge-countdown').textContent = order.status === 'pending' ? countdown(order.expires_at) : '—';
}

function when(order) {
  if (order.status === 'pending') return `expires ${time(order.expires_at)}`;
  if (order.paid_at) return `paid ${time(order.paid_at)}`;
  if (order.status === 'expired') return `expired ${time(order.expires_at)}`;
  return '—';
}

function orderActions(order) {
  if (order.status !== 'pending') return '';
  const show = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Show the order for ${usd(order.pay_amount)} USDT` }, 'Show');
  show.addEventListener('click', () => {
    showOrder(order);
    renderOrders();
    $('#recharge-order').scrollIntoView({ block: 'nearest' });
  });
  const cancel = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Cancel the order for ${usd(order.pay_amount)} USDT` }, 'Cancel');
  cancel.addEventListener('click', () => busy(cancel, async () => {
    if (!(await confirmDialog(`Cancel the recharge order for ${usd(order.pay_amount)} USDT? Do not send the payment after cancelling: it would not be credited automatically.`, 'Cancel order'))) return;
    try {
      await post(`/v1/recharge/orders/${order.id}/cancel`);
      toast('Recharge order cancelled.', 'success');
      await loadOrders();
    } catch (error) {
      toast(error.message, 'error');
    }
  }));
  return h('span', { class: 'row-actions' }, order.id === shown ? null : show, cancel);
}

function renderOrders() {
  fillTable($('#recharge-orders'), orders.map((order) => {
    const pending = order.status === 'pending';
    const state = h('span', { class: `badge ${pending || order.status.startsWith('paid') ? 'badge-on' : 'badge-off'}` }, statusWord(order.status));
    return h('tr', { 'data-key': order.id, 'data-order-id': order.id, 'data-status': order.status, class: order.id === shown ? 'selected' : null },
      td(time(order.created_at), '', 'Created'),
      td(`${usd(order.pay_amount)} USDT`, 'num', 'Send exactly'),
      td(pending ? [state, ' ', h('span', { class: 'countdown' }, `${countdown(order.expires_at)} left`)] : state, '', 'Status'),
      td(when(order), '', 'When'),
      td(orderActions(order), 'actions', '', `${order.id}:${order.status}:${order.id === shown}`));
  }));
}

/** Fetch the orders (pending first, then newest first); say so when a pending one was paid. */
async function loadOrders() {
  const rows = await get('/v1/recharge/orders?limit=50');
  const before = new Map(orders.map((order) => [order.id, order.status]));
  orders = [...rows.filter((o) => o.status === 'pending'), ...rows.filter((o) => o.status !== 'pending')];
  const paid = orders.filter((o) => o.status === 'paid' && before.get(o.id) === 'pending');
  const current = orders.find((o) => o.id === shown) || orders.find((o) => o.status === 'pending');
  if (current) showOrder(current);
  renderOrders();
  for (const order of paid) toast(`Recharge received: ${usd(order.pay_amount)} USDT.`, 'success');
  if (paid.length) await loadWallet();
}

/** Every second the countdowns; every 2 s the orders again while one waits for its payment. */
async function tick() {
  ticks += 1;
  const waiting = orders.some((o) => o.status === 'pending');
  if (waiting && ticks % 2 === 0) await loadOrders();
  else if (waiting) {
    const current = orders.find((o) => o.id === shown);
    if (current) showOrder(current);
    renderOrders();
  }
}

onSubmit($('#recharge-form'), async (data) => {
  const created = await post('/v1/recharge/orders', { amount: String(data.get('amount') || '').trim() });
  showOrder(created);
  await loadOrders();
});

onSubmit($('#transfer-form'), async (data, form) => {
  await post('/v1/user/wallet/transfers', {
    direction: 'to_portfolio', // one way: portfolio money is paper (docs/wallet.md)
    portfolio_id: Number(data.get('portfolio_id')),
    amount: String(data.get('amount') || '').trim(),
  });
  form.reset();
  toast('Transferred.', 'success');
  await loadWallet();
});

wireCopyButtons();
Promise.all([loadWallet(), loadPortfolios(), loadOrders()]).catch((error) => toast(error.message, 'error'));
setInterval(() => tick().catch((error) => toast(error.message, 'error')), 1000);
