// The portfolio page's price chart: candles and volume of the ticket's symbol, this portfolio's
// fills as markers, and lines for its open orders, waiting stops, the position's entry, TP/SL
// and liquidation price. Candles come from /v1/market/klines and the socket's `kline` channel;
// everything else from what the page already reads (no extra requests for the overlays).

import { get } from '../api.js';
import { $, $$ } from '../dom.js';
import { tradeChart } from '../charts.js';
import { instruments, price, qty } from '../instruments.js';

const INTERVAL_KEY = 'papertrade.chart.interval';

export function setupChart(root) {
  const el = $('#price-chart', root);
  const chart = tradeChart(el);
  let symbol = '';
  let interval = localStorage.getItem(INTERVAL_KEY) || '15m';
  let overlay = { fills: [], orders: [], stops: [], positions: [] };
  const listeners = [];

  function pressInterval() {
    for (const b of $$('[data-interval]', root)) b.setAttribute('aria-pressed', String(b.dataset.interval === interval));
  }

  async function loadCandles() {
    if (!symbol) return;
    const shown = symbol;
    const rows = await get(`/v1/market/klines?symbol=${encodeURIComponent(shown)}&interval=${interval}&limit=500`);
    if (shown !== symbol) return;
    chart.setKlines(rows);
    drawOverlay();
  }

  function drawOverlay() {
    if (!symbol) return;
    chart.setFills(overlay.fills.filter((f) => f.symbol === symbol).map((f) => ({
      time: f.created_at,
      side: f.side,
      text: `${f.side === 'buy' ? 'B' : 'S'} ${qty(f.symbol, f.quantity)} @ ${price(f.symbol, f.price)}`,
    })));
    const lines = [];
    for (const o of overlay.orders.filter((o) => o.symbol === symbol && o.price)) {
      lines.push({ price: o.price, kind: 'order', title: `${o.side} ${qty(o.symbol, Number(o.quantity) - Number(o.filled_quantity))}` });
    }
    for (const c of overlay.stops.filter((c) => c.symbol === symbol && c.trigger_price)) {
      const kind = c.type.startsWith('take_profit') ? 'tp' : 'sl';
      lines.push({ price: c.trigger_price, kind, title: kind === 'tp' ? 'TP' : 'SL' });
    }
    const held = overlay.positions.find((p) => p.symbol === symbol);
    if (held) {
      lines.push({ price: held.entry_price, kind: 'entry', title: `entry ${held.side}` });
      if (held.liquidation_price) lines.push({ price: held.liquidation_price, kind: 'liq', title: 'liq.' });
    }
    chart.setLines(lines);
    // What is drawn, in words, for screen readers (and for whoever cannot see the canvas).
    const fills = overlay.fills.filter((f) => f.symbol === symbol).length;
    const names = { order: 'order', entry: 'entry', tp: 'take-profit', sl: 'stop-loss', liq: 'liquidation' };
    $('#chart-summary', root).textContent = `${symbol} ${interval} candles; ${fills} fill${fills === 1 ? '' : 's'} marked`
      + (lines.length ? `; lines: ${lines.map((l) => `${names[l.kind]} ${price(symbol, l.price)}`).join(', ')}.` : '.');
  }

  for (const button of $$('[data-interval]', root)) {
    button.addEventListener('click', () => {
      interval = button.dataset.interval;
      localStorage.setItem(INTERVAL_KEY, interval);
      pressInterval();
      loadCandles().catch(() => {});
      listeners.forEach((fn) => fn());
    });
  }
  pressInterval();

  return {
    /** The ticket's symbol changed: show its candles. */
    show(next) {
      if (!next || next === symbol) return;
      symbol = next;
      $('#chart-symbol', root).textContent = next;
      const instrument = instruments.get(next);
      if (instrument) chart.setTick(instrument.tick_size);
      loadCandles().catch(() => {});
    },
    /** What the page read: fills, open orders, waiting stops, positions. */
    overlay(next) {
      overlay = { ...overlay, ...next };
      drawOverlay();
    },
    mark(value) {
      if (symbol) $('#chart-mark', root).textContent = price(symbol, value);
    },
    kline(data) {
      if (data.symbol === symbol && data.interval === interval) chart.update(data);
    },
    reload: () => loadCandles(),
    channel: () => (symbol ? `kline:${symbol}:${interval}` : null),
    onIntervalChange(fn) {
      listeners.push(fn);
    },
  };
}
