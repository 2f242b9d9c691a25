// Dashboard: the user's portfolios with equity, return and open positions; create a portfolio.
// Data: GET /v1/portfolios/my, then per portfolio /equity and /positions.

import { get, post } from '../api.js';
import { h, reconcile, $ } from '../dom.js';
import { pct, pnlClass, signedUsd, usd } from '../format.js';
import { loadInstruments, qty } from '../instruments.js';
import { connectLive, every, throttle } from '../live.js';
import { onSubmit } from '../ui.js';

const list = $('#pf-list');
const empty = $('#pf-empty');
const totals = $('#totals');

async function load() {
  const portfolios = await get('/v1/portfolios/my');
  const details = await Promise.all(portfolios.map(async (p) => {
    const [equity, positions] = await Promise.all([
      get(`/v1/portfolios/${p.id}/equity`),
      get(`/v1/portfolios/${p.id}/positions`),
    ]);
    return { p, equity, positions };
  }));
  render(details);
  const held = new Set(details.flatMap((d) => d.positions.map((p) => p.symbol)));
  live?.setChannels([...ACCOUNT_CHANNELS, ...[...held].map((s) => `mark_price:${s}`)]);
}

function render(details) {
  list.removeAttribute('aria-busy');
  empty.hidden = details.length > 0;
  reconcile(list, details.map(card));
  const equity = details.reduce((sum, d) => sum + Number(d.equity.equity), 0);
  const upnl = details.reduce((sum, d) => sum + Number(d.equity.unrealized_pnl), 0);
  totals.replaceChildren(
    h('div', {}, h('span', { class: 'muted' }, 'Total equity '), h('strong', { class: 'num' }, `${usd(equity)} USDT`)),
    h('div', {}, h('span', { class: 'muted' }, 'Unrealized '), h('strong', { class: `num ${pnlClass(upnl)}` }, signedUsd(upnl))),
  );
}

function card({ p, equity, positions }) {
  const start = Number(p.initial_balance);
  const ret = start ? (Number(equity.equity) - start) / start : null;
  const link = h('a', { href: `/app/portfolios/${p.id}`, title: p.name }, p.name);
  return h('article', { class: 'card pf-card', 'data-key': p.id, 'data-portfolio-id': p.id },
    h('header', { class: 'pf-card-head' },
      h('h3', { class: 'clamp-2' }, link),
      h('p', { class: 'pf-meta' },
        h('span', { class: 'code' }, p.code), ' ',
        p.visibility === 'public' ? h('span', { class: 'badge' }, 'public') : null)),
    h('dl', { class: 'stats stats-compact' },
      h('div', {}, h('dt', {}, 'Equity'), h('dd', { class: 'num' }, usd(equity.equity))),
      h('div', {}, h('dt', {}, 'Return'), h('dd', { class: `num ${pnlClass(ret, 4)}` }, pct(ret))),
      h('div', {}, h('dt', {}, 'Unrealized'), h('dd', { class: `num ${pnlClass(equity.unrealized_pnl)}` }, signedUsd(equity.unrealized_pnl))),
      h('div', {}, h('dt', {}, 'Available'), h('dd', { class: 'num' }, usd(equity.available)))),
    positions.length
      ? h('ul', { class: 'pos-chips', 'aria-label': 'Open positions' }, positions.map((pos) =>
        h('li', { class: `chip ${pos.side}` },
          h('strong', {}, pos.symbol), ` ${pos.side} ${qty(pos.symbol, Math.abs(pos.quantity))} `,
          h('span', { class: `num ${pnlClass(pos.unrealized_pnl)}` }, signedUsd(pos.unrealized_pnl)))))
      : h('p', { class: 'muted small' }, 'No open position.'));
}

await loadInstruments().catch(() => {});
// Live: events of any of my portfolios, and the marks of held symbols, trigger a refresh.
const ACCOUNT_CHANNELS = ['orders', 'positions', 'balance'];
let live = null;
const poll = every(5000, load);
live = connectLive(ACCOUNT_CHANNELS, throttle(1000, () => poll.now()), (state) => {
  poll.setPeriod(state === 'open' ? 30000 : 5000);
  if (state === 'open') poll.now();
});

onSubmit($('#create-portfolio'), async (data) => {
  const created = await post('/v1/portfolios', {
    name: String(data.get('name')).trim(),
    description: String(data.get('description') || ''),
    initial_balance: String(data.get('initial_balance')).replace(/[ ,_]/g, ''),
    visibility: data.get('public') ? 'public' : 'private',
  });
  location.assign(`/app/portfolios/${created.id}`);
});
