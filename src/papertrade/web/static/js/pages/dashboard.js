// Dashboard: the user's portfolios with equity, return and open positions; create a portfolio.
// Data: GET /v1/portfolios/my, then per portfolio /equity and /positions.

import { get, post } from '../api.js';
import { h, reconcile, $ } from '../dom.js';
import { liveReturn, pct, pnlClass, signedUsd, usd } from '../format.js';
import { loadInstruments, qty } from '../instruments.js';
import { coalesce, connectLive, every, liveStatus } from '../live.js';
import { onSubmit } from '../ui.js';

const list = $('#pf-list');
const empty = $('#pf-empty');
const totals = $('#totals');

let details = [];

async function load() {
  const portfolios = await get('/v1/portfolios/my');
  details = await Promise.all(portfolios.map(async (p) => {
    const [equity, positions] = await Promise.all([
      get(`/v1/portfolios/${p.id}/equity`),
      get(`/v1/portfolios/${p.id}/positions`),
    ]);
    return { p, equity: { ...equity, equity_at_read: equity.equity }, positions };
  }));
  render(details);
}

/** `position.mark` of one portfolio: its positions' PnL and its equity, in place. */
function applyMarks(portfolioId, data) {
  const found = details.find((d) => d.p.id === portfolioId);
  if (!found) return;
  const marks = new Map(data.positions.map((p) => [p.symbol, p]));
  found.positions = found.positions.map((p) => {
    const marked = marks.get(p.symbol);
    return marked ? { ...p, mark_price: marked.mark_price, unrealized_pnl: marked.unrealized_pnl } : p;
  });
  // Equity is the wallet balance plus the unrealized PnL, as GET …/equity computes it.
  const equity = Number(found.equity.balance) + Number(data.unrealized_pnl);
  found.equity = { ...found.equity, unrealized_pnl: data.unrealized_pnl, equity };
  render(details);
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
  const ret = liveReturn(equity); // time-weighted: a top-up is not a return
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
// Live: `position.mark` moves each card's PnL and equity in place (no request); an order,
// position or balance event of any of my portfolios causes one re-read per burst.
const ACCOUNT_CHANNELS = ['orders', 'positions', 'balance'];
const status = liveStatus(null, $('#stale-note'));
const poll = every(5000, load, status.track('portfolios'));
const onAccount = coalesce(250, () => poll.now());
connectLive(ACCOUNT_CHANNELS, (message) => {
  if (message.type === 'position.mark') applyMarks(message.portfolio_id, message.data);
  else onAccount();
}, (socket) => {
  status.socket(socket === 'open');
  poll.setPeriod(socket === 'open' ? 30000 : 5000);
  if (socket === 'open') onAccount();
});

onSubmit($('#create-portfolio'), async (data) => {
  const created = await post('/v1/portfolios', {
    name: String(data.get('name')).trim(),
    description: String(data.get('description') || ''),
    initial_balance: String(data.get('initial_balance')).replace(/[ ,_]/g, ''),
    visibility: data.get('public') ? 'public' : 'private',
    realism: String(data.get('realism') || 'mark'),
  });
  location.assign(`/app/portfolios/${created.id}`);
});
