// Portfolio detail: stats, equity curve, positions (live mark and PnL), open orders, fills,
// signals, the order ticket and leverage; the API Keys, Webhook and Account panels live in
// ../portfolio/. Every number comes from /v1 (REST or the /v1/ws socket); this page only shows
// it and sends orders.

import { get } from '../api.js';
import { $ } from '../dom.js';
import { loadInstruments } from '../instruments.js';
import { coalesce, connectLive, every, liveStatus } from '../live.js';
import { tabs, wireCopyButtons } from '../ui.js';
import { setupAccount } from '../portfolio/account.js';
import { setupCredentials } from '../portfolio/credentials.js';
import { setupTicket } from '../portfolio/ticket.js';
import { createViews } from '../portfolio/views.js';

const root = $('#portfolio');
const id = Number(root.dataset.id);
const base = `/v1/portfolios/${id}`;

const views = createViews(root);
const state = { portfolio: null, equity: null, positions: [], signals: [] };
const status = liveStatus($('#live-state', root), $('#stale-note', root));

function showAccount() {
  views.header(state.portfolio, state.equity);
  views.positions(state.positions);
}

async function loadFast() {
  const [portfolio, equity, positions, orders] = await Promise.all([
    get(base),
    get(`${base}/equity`),
    get(`${base}/positions`),
    get(`/v1/order?portfolio_id=${id}&status=open&limit=200`),
  ]);
  Object.assign(state, { portfolio, equity, positions });
  showAccount();
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
  // A signal pushed while this read was under way is newer than what it lists: keep it.
  const newest = page.signals[0]?.id ?? 0;
  const pushed = state.signals.filter((s) => s.id > newest);
  state.signals = [...pushed, ...page.signals].slice(0, 50);
  views.signals(state.signals);
}

async function refreshAll() {
  await Promise.all([fast.now(), slow.now()]);
}

/** `position.mark`: each open position at the current mark with its PnL, once a second. */
function applyMarks(data) {
  if (!state.equity) return;
  const marks = new Map(data.positions.map((p) => [p.symbol, p]));
  // A position opened or closed since the last read is left to the re-read its event causes.
  state.positions = state.positions.map((p) => {
    const marked = marks.get(p.symbol);
    return marked ? { ...p, mark_price: marked.mark_price, unrealized_pnl: marked.unrealized_pnl } : p;
  });
  // Equity is the wallet balance plus the unrealized PnL, as GET …/equity computes it.
  const equity = Number(state.equity.balance) + Number(data.unrealized_pnl);
  state.equity = { ...state.equity, unrealized_pnl: data.unrealized_pnl, equity };
  showAccount();
}

/** `signal.*`: the signal as the history lists it; a newer state of a known one replaces it. */
function applySignal(signal) {
  if (!signal?.id || signal.body === undefined) return;
  const rest = state.signals.filter((s) => s.id !== signal.id);
  state.signals = [signal, ...rest].sort((a, b) => b.id - a.id).slice(0, 50);
  views.signals(state.signals);
}

const ticket = setupTicket({ root, portfolioId: id, refresh: refreshAll, views });
const credentials = setupCredentials({ root, portfolioId: id, views });
setupAccount({ root, portfolioId: id, refresh: refreshAll, getPortfolio: () => state.portfolio });
tabs($('.tabs', root));
wireCopyButtons(root);

// Prices and sizes show with each symbol's own tick and step, so know them first.
await loadInstruments().catch(() => {});
const fast = every(2000, loadFast, status.track('account'));
const slow = every(10000, loadSlow, status.track('history'));

// Live: `position.mark` moves the positions' mark and PnL in place and the ticket's symbol's
// `mark_price` its mark, without a request. Events that change the account (orders, fills,
// positions, balance, signals) cause one re-read per burst. Polling slows to a safety net while
// the socket is up.
let live = null;
function watchMarks() {
  live?.setChannels([`portfolio:${id}`, ...(ticket.symbol() ? [`mark_price:${ticket.symbol()}`] : [])]);
}
const onAccount = coalesce(250, () => refreshAll());
live = connectLive([`portfolio:${id}`], (message) => {
  if (message.type === 'mark_price') {
    ticket.onMark(message);
  } else if (message.type === 'position.mark') {
    applyMarks(message.data);
  } else {
    if (message.type?.startsWith('signal.')) applySignal(message.data);
    onAccount();
  }
}, (socket) => {
  const open = socket === 'open';
  status.socket(open);
  ticket.setLive(open);
  fast.setPeriod(open ? 15000 : 2000);
  slow.setPeriod(open ? 60000 : 10000);
  if (open) onAccount(); // catch up on anything missed while it was down
});
ticket.onSymbolChange(watchMarks);
watchMarks();
