// Portfolio detail: stats, the price chart (fills, orders, entry, TP/SL, liquidation) and the
// equity curve, positions (live mark and PnL), open orders, order history, fills, funding,
// ledger, signals, the order ticket and leverage; the API Keys, Webhook and Account panels live
// in ../portfolio/. Every number comes from /v1 (REST or the /v1/ws socket); this page only
// shows it and sends orders. On a phone the page is three views (chart, trade, positions) with
// a Buy / Sell bar at the bottom.

import { get, post } from '../api.js';
import { $, $$ } from '../dom.js';
import { loadInstruments } from '../instruments.js';
import { coalesce, connectLive, every, liveStatus } from '../live.js';
import { busy, formError, ready, tabs, toast, wireCopyButtons } from '../ui.js';
import { price, qty } from '../instruments.js';
import { setupChart } from '../portfolio/chart.js';
import { setupAccount } from '../portfolio/account.js';
import { setupCredentials } from '../portfolio/credentials.js';
import { setupMarginMode } from '../portfolio/margin-mode.js';
import { setupTicket } from '../portfolio/ticket.js';
import { showStrategies } from '../portfolio/strategies.js';
import { createViews } from '../portfolio/views.js';

const root = $('#portfolio');
const id = Number(root.dataset.id);
const base = `/v1/portfolios/${id}`;

const views = createViews(root);
const state = { portfolio: null, equity: null, positions: [], signals: [], strategySignals: [], exits: new Map() };
const status = liveStatus($('#live-state', root), $('#stale-note', root));

function showAccount() {
  views.header(state.portfolio, state.equity);
  views.positions(state.positions, state.exits);
  chart.overlay({ positions: state.positions });
}

/** Open take-profit / stop-loss orders by position (symbol and side; the newest of each kind). */
function exitsOf(stops) {
  const byPosition = new Map();
  for (const c of stops) {
    const key = views.positionKey(c);
    const own = byPosition.get(key) || {};
    const kind = c.type.startsWith('take_profit') ? 'tp' : c.type.startsWith('stop') ? 'sl' : null;
    if (kind && !own[kind]) own[kind] = c;
    byPosition.set(key, own);
  }
  return byPosition;
}

let shape = null; // the open orders and positions the last read showed
let refreshing = false; // a push asked for both reads (refreshAll)

async function loadFast() {
  const [portfolio, equity, positions, orders, stops] = await Promise.all([
    get(base),
    get(`${base}/equity`),
    get(`${base}/positions`),
    get(`/v1/order?portfolio_id=${id}&status=open&limit=200`),
    get(`/v1/conditional-order?portfolio_id=${id}&status=open&limit=200`),
  ]);
  Object.assign(state, {
    portfolio,
    equity: { ...equity, equity_at_read: equity.equity }, // the live return grows from it
    positions,
    exits: exitsOf(stops.conditional_orders),
  });
  // An order ended or a position moved and no push said so (the socket dropped it, or is
  // down): the history, fills and ledger have changed too, so read them now rather than at
  // their own, slower period.
  const seen = JSON.stringify([orders.orders.map((o) => [o.id, o.filled_quantity]), positions.map((p) => [views.positionKey(p), p.quantity])]);
  if (shape !== null && seen !== shape && !refreshing) slow.now();
  shape = seen;
  showAccount();
  views.orders(orders.orders);
  views.stops(stops.conditional_orders);
  $('#count-orders', root).textContent = String(orders.orders.length + stops.conditional_orders.length || '');
  chart.overlay({ orders: orders.orders, stops: stops.conditional_orders });
  ticket.positionsChanged(positions);
  marginMode.positionsChanged(positions);
  watchMarks();
  curve.latest = { time: equity.time, equity: equity.equity };
  views.curve(curve.points, curve.latest, portfolio);
}

const curve = { points: [], latest: null };

async function loadSlow() {
  const [fills, points, history, ledger, ended] = await Promise.all([
    get(`${base}/fills?limit=100`),
    get(`${base}/equity-curve?limit=1000`),
    get(`/v1/order?portfolio_id=${id}&status=closed&limit=100`),
    get(`${base}/ledger?limit=200`),
    get(`/v1/conditional-order?portfolio_id=${id}&status=closed&limit=100`),
  ]);
  views.history(history.orders, ended.conditional_orders);
  views.fills(fills);
  views.ledger(ledger);
  chart.overlay({ fills });
  curve.points = points;
  if (state.portfolio) views.curve(points, curve.latest, state.portfolio);
  await loadSignals();
  await credentials.refresh();
}

async function loadSignals() {
  const [page, fromStrategies, deployed] = await Promise.all([
    get(`${base}/signals?limit=50`),
    get(`${base}/strategy-signals?limit=50`),
    get(`${base}/strategies`),
  ]);
  // A signal pushed while this read was under way is newer than what it lists: keep it.
  const newest = page.signals[0]?.id ?? 0;
  const pushed = state.signals.filter((s) => s.id > newest);
  state.signals = [...pushed, ...page.signals].slice(0, 50);
  state.strategySignals = fromStrategies.signals;
  views.signals(state.signals, state.strategySignals);
  showStrategies(root, deployed);
}

async function refreshAll() {
  refreshing = true;
  try {
    await Promise.all([fast.now(), slow.now()]);
  } finally {
    refreshing = false;
  }
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
  views.signals(state.signals, state.strategySignals);
}

/** An order the user did not place themselves filled (a stop, a take-profit, the liquidation
 * engine, copy trading, a strategy): say so, so a position never just vanishes. A stop whose
 * order was refused says why. */
const WHO = { liquidation: 'The liquidation engine', 'copy trading': 'Copy trading', signal: 'A signal' };
function announce(message) {
  const data = message.data || {};
  if (message.type === 'order.filled' && data.placed_by) {
    const verb = data.side === 'buy' ? 'bought' : 'sold';
    const who = WHO[data.placed_by] || `Your ${data.placed_by}`;
    toast(`${who} ${verb} ${qty(data.symbol, data.filled_quantity)} ${data.symbol} at ${price(data.symbol, data.avg_price)}.`, data.placed_by === 'liquidation' ? 'error' : 'info');
  } else if (message.type === 'conditional.rejected') {
    toast(`${data.symbol} ${String(data.type || '').replaceAll('_', ' ')} triggered but placed nothing: ${data.reason || 'refused'}.`, 'error');
  }
}

const chart = setupChart(root);
const ticket = setupTicket({ root, portfolioId: id, refresh: refreshAll, views });
const marginMode = setupMarginMode({ root, portfolioId: id, ticket });
const credentials = setupCredentials({ root, portfolioId: id, views });
setupAccount({ root, portfolioId: id, refresh: refreshAll, getPortfolio: () => state.portfolio });
tabs($('.activity-card .tabs', root));
tabs($('.chart-card .tabs', root), () => {
  // The equity curve is drawn once its panel is visible (a hidden chart has no size).
  if (!$('#panel-equity', root).hidden && state.portfolio) views.curve(curve.points, curve.latest, state.portfolio, true);
});
wireCopyButtons(root);
setupPositionActions();
setupPhone();

/** Close (all, part, or at a limit price) and TP/SL of a position, from its row's buttons. */
function setupPositionActions() {
  const dialog = $('#close-dialog', root);
  const form = $('#close-form', root);
  let held = null;
  const fillShare = () => {
    const share = Number(form.elements.share.value) / 100;
    const step = Math.abs(Number(held.quantity)) * share;
    form.elements.quantity.value = share === 1 ? String(Math.abs(held.quantity)) : qty(held.symbol, step).replaceAll(',', '');
  };
  views.on('close', (p) => {
    held = p;
    $('#close-title', root).textContent = `Close ${p.symbol} ${p.side}`;
    $('#close-held', root).textContent = `Position ${qty(p.symbol, Math.abs(p.quantity))} at entry ${price(p.symbol, p.entry_price)}, mark ${price(p.symbol, p.mark_price)}.`;
    form.elements.share.value = '100';
    form.elements.price.value = '';
    formError(form, null);
    fillShare();
    dialog.showModal();
  });
  for (const radio of form.elements.share) radio.addEventListener('change', fillShare);
  $('#close-cancel', root).addEventListener('click', () => dialog.close());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = $('button[type="submit"]', form);
    formError(form, null);
    await busy(button, async () => {
      try {
        const quantity = form.elements.quantity.value.trim().replace(/[ ,_]/g, '');
        const limit = form.elements.price.value.trim().replace(/[ ,_]/g, '');
        const body = { portfolio_id: id, symbol: held.symbol, action: 'close', quantity, type: limit ? 'limit' : 'market' };
        if (limit) body.price = limit;
        const order = await post('/v1/order', body);
        toast(order.status === 'filled' ? `Closed ${qty(order.symbol, order.quantity)} ${order.symbol} at ${price(order.symbol, order.avg_price)}.` : `Close order placed at ${price(order.symbol, order.price)}.`, 'success');
        dialog.close();
        await refreshAll();
      } catch (error) {
        formError(form, error);
      }
    });
  });

  const tpslDialog = $('#tpsl-dialog', root);
  const tpslForm = $('#tpsl-form', root);
  views.on('tpsl', (p, own) => {
    held = p;
    const side = p.position_side && p.position_side !== 'BOTH' ? ` ${p.position_side}` : '';
    $('#tpsl-title', root).textContent = `Take-profit and stop-loss of ${p.symbol}${side}`;
    tpslForm.elements.take_profit.value = own.tp ? String(own.tp.trigger_price) : '';
    tpslForm.elements.stop_loss.value = own.sl ? String(own.sl.trigger_price) : '';
    formError(tpslForm, null);
    tpslDialog.showModal();
  });
  $('#tpsl-cancel', root).addEventListener('click', () => tpslDialog.close());
  tpslForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = $('button[type="submit"]', tpslForm);
    formError(tpslForm, null);
    await busy(button, async () => {
      try {
        const body = {};
        const tp = tpslForm.elements.take_profit.value.trim();
        const sl = tpslForm.elements.stop_loss.value.trim();
        if (tp) body.take_profit = tp;
        if (sl) body.stop_loss = sl;
        if (held.position_side && held.position_side !== 'BOTH') body.position_side = held.position_side;
        await post(`${base}/positions/${held.symbol}/tpsl`, body);
        toast(tp || sl ? `${held.symbol}: take-profit ${tp || '—'}, stop-loss ${sl || '—'}.` : `${held.symbol}: take-profit and stop-loss removed.`, 'success');
        tpslDialog.close();
        await refreshAll();
      } catch (error) {
        formError(tpslForm, error);
      }
    });
  });

  const closeAll = $('#close-all', root);
  closeAll.addEventListener('click', () => busy(closeAll, async () => {
    if (!(await views.confirm(`Close all ${state.positions.length} positions at market?`, 'Close all'))) return;
    const results = await Promise.allSettled(state.positions.map((p) => post('/v1/order', {
      portfolio_id: id, symbol: p.symbol, type: 'market', action: 'close', quantity: String(Math.abs(p.quantity)),
    })));
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length) toast(`${failed.length} position(s) not closed: ${failed[0].reason.message}`, 'error');
    else toast('All positions closed at market.', 'success');
    await refreshAll();
  }));
}

/** Phone width: one of chart / trade / positions at a time, and a Buy / Sell bar. */
function setupPhone() {
  const grid = $('#trade-grid', root);
  const buttons = $$('[data-phone-view]', root).filter((b) => b.tagName === 'BUTTON');
  const showView = (name) => {
    grid.dataset.phoneView = name;
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.phoneView === name));
  };
  for (const b of buttons) b.addEventListener('click', () => showView(b.dataset.phoneView));
  for (const b of $$('[data-phone-side]', root)) {
    b.addEventListener('click', () => {
      showView('trade');
      ticket.start(b.dataset.phoneSide);
    });
  }
  // Rendered disabled: a tap before this script ran would have done nothing, silently.
  ready($('.phone-tabs', root));
  ready($('.phone-bar', root));
}

// Prices and sizes show with each symbol's own tick and step, so know them first.
await loadInstruments().catch(() => {});
const fast = every(2000, loadFast, status.track('account'));
const slow = every(10000, loadSlow, status.track('history'));

// Live: `position.mark` moves the positions' mark and PnL in place and the ticket's symbol's
// `mark_price` its mark, without a request. Events that change the account (orders, fills,
// positions, balance, signals) cause one re-read per burst. Polling slows to a safety net while
// the socket is up.
let live = null;
let liveOpen = false;
function watchMarks() {
  const symbol = ticket.symbol();
  live?.setChannels([`portfolio:${id}`, ...(symbol ? [`mark_price:${symbol}`] : []), ...(chart.channel() ? [chart.channel()] : [])]);
}
const onAccount = coalesce(250, () => refreshAll());
live = connectLive([`portfolio:${id}`], (message) => {
  if (message.type === 'mark_price') {
    ticket.onMark(message);
    const data = message.data ?? message;
    if (data.symbol === ticket.symbol()) chart.mark(data.mark_price);
  } else if (message.type === 'kline') {
    chart.kline(message.data || {});
  } else if (message.type === 'position.mark') {
    applyMarks(message.data);
  } else {
    if (message.type?.startsWith('signal.')) applySignal(message.data);
    announce(message);
    onAccount();
  }
}, (socket) => {
  const open = socket === 'open';
  liveOpen = open;
  status.socket(open);
  ticket.setLive(open);
  fast.setPeriod(open ? 15000 : 2000);
  slow.setPeriod(open ? 60000 : 10000);
  if (open) onAccount(); // catch up on anything missed while it was down
});
ticket.onSymbolChange((symbol) => {
  chart.show(symbol);
  watchMarks();
});
chart.onIntervalChange(watchMarks);
if (ticket.symbol()) chart.show(ticket.symbol());
watchMarks();
// Without the socket the current candle is re-read with the rest.
every(15000, () => (liveOpen ? Promise.resolve() : chart.reload()));
