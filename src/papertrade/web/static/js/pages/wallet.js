// Wallet: balance and tier, a USDT-TRC20 recharge order (exact amount, address, countdown,
// polled until paid), transfers with portfolios, history. docs/wallet.md, docs/tiers.md.

import { get, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { countdown, signedUsd, time, usd } from '../format.js';
import { onSubmit, toast, wireCopyButtons } from '../ui.js';

let watching = null; // the recharge order being waited for

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
  $('#recharge-order').hidden = false;
  $('#pay-amount').value = String(order.pay_amount);
  $('#pay-address').value = order.address;
  const qr = `/v1/recharge/orders/${order.id}/qr.svg`;
  if ($('#recharge-qr').getAttribute('src') !== qr) $('#recharge-qr').setAttribute('src', qr);
  $('#recharge-status').textContent = order.status;
  watching = order.status === 'pending' ? order : null;
}

async function poll() {
  if (watching) {
    $('#recharge-countdown').textContent = countdown(watching.expires_at);
    const order = await get(`/v1/recharge/orders/${watching.id}`);
    showOrder(order);
    if (order.status === 'paid') {
      toast(`Recharge received: ${usd(order.pay_amount)} USDT.`, 'success');
      await loadWallet();
    }
  }
}

onSubmit($('#recharge-form'), async (data) => {
  showOrder(await post('/v1/recharge/orders', { amount: String(data.get('amount') || '').trim() }));
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
Promise.all([loadWallet(), loadPortfolios()]).catch((error) => toast(error.message, 'error'));
setInterval(() => poll().catch((error) => toast(error.message, 'error')), 2000);
