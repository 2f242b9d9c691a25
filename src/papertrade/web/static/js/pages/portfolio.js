// Portfolio detail: stats, equity curve, positions (live mark and PnL), open orders, fills,
// signals, the order ticket and leverage; the API Keys, Webhook and Account panels live in
// ../portfolio/. Every number comes from /v1; this page only shows it and sends orders.

import { get } from '../api.js';
import { $ } from '../dom.js';
import { loadInstruments } from '../instruments.js';
import { connectLive, every, throttle } from '../live.js';
import { tabs, wireCopyButtons } from '../ui.js';
import { setupAccount } from '../portfolio/account.js';
import { setupCredentials } from '../portfolio/credentials.js';
import { setupTicket } from '../portfolio/ticket.js';
import { createViews } from '../portfolio/views.js';

const root = $('#portfolio');
const id = Number(root.dataset.id);
const base = `/v1/portfolios/${id}`;

const views = createViews(root);
const state = { portfolio: null, positions: [] };

async function loadFast() {
  const [portfolio, equity, positions, orders] = await Promise.all([
    get(base),
    get(`${base}/equity`),
    get(`${base}/positions`),
    get(`/v1/order?portfolio_id=${id}&status=open&limit=200`),
  ]);
  state.portfolio = portfolio;
  state.positions = positions;
  views.header(portfolio, equity);
  views.positions(positions);
  views.orders(orders.orders);
  ticket.positionsChanged(positions);
  watchMarks();
  curve.latest = { time: equity.time, equity: equity.equity };
  views.curve(curve.points, curve.latest, portfolio);
}

const curve = { points: [], latest: null };

async function loadSlow() {
  const [fills, points] = await Promise.all([
    get(`${base}/fills?limit=100`),
    get(`${base}/equity-curve?limit=1000`),
  ]);
  views.fills(fills);
  curve.points = points;
  if (state.portfolio) views.curve(points, curve.latest, state.portfolio);
  await loadSignals();
  await credentials.refresh();
}

async function loadSignals() {
  const page = await get(`${base}/signals?limit=50`);
  views.signals(page.signals);
}

async function refreshAll() {
  await Promise.all([fast.now(), slow.now()]);
}

const ticket = setupTicket({ root, portfolioId: id, refresh: refreshAll, views });
const credentials = setupCredentials({ root, portfolioId: id, views });
setupAccount({ root, portfolioId: id, refresh: refreshAll, getPortfolio: () => state.portfolio });
tabs($('.tabs', root));
wireCopyButtons(root);

// Prices and sizes show with each symbol's own tick and step, so know them first.
await loadInstruments().catch(() => {});
const fast = every(2000, loadFast);
const slow = every(10000, loadSlow);

// Live: a mark-price tick of a held (or the ticket's) symbol re-reads positions and equity
// (throttled); an order, position, balance or signal event re-reads everything. Polling slows
// to a safety net while the socket is up.
let live = null;
function watchMarks() {
  if (!live) return;
  const symbols = new Set([...state.positions.map((p) => p.symbol), ticket.symbol()].filter(Boolean));
  live.setChannels([`portfolio:${id}`, ...[...symbols].map((s) => `mark_price:${s}`)]);
}
const onMark = throttle(1000, () => fast.now());
const onAccount = throttle(300, () => refreshAll());
live = connectLive([`portfolio:${id}`], (message) => {
  if (message.type === 'mark_price') {
    ticket.onMark(message);
    onMark();
  } else {
    onAccount();
  }
}, (status) => {
  views.liveState(status === 'open');
  ticket.setLive(status === 'open');
  fast.setPeriod(status === 'open' ? 15000 : 2000);
  slow.setPeriod(status === 'open' ? 30000 : 10000);
  if (status === 'open') refreshAll(); // catch up on anything missed while it was down
});
ticket.onSymbolChange(watchMarks);
watchMarks();
