// Markets: every perpetual with live mark, index and funding. /v1/market/symbols and /quotes.

import { get } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { decimalsOf, num, pct } from '../format.js';
import { instruments, loadInstruments } from '../instruments.js';
import { connectLive, every, throttle } from '../live.js';

const table = $('#markets-table');
const filter = $('#market-filter');
const quotes = new Map();

async function load() {
  await loadInstruments();
  for (const q of await get('/v1/market/quotes')) quotes.set(q.symbol, q);
  render();
}

function render() {
  const wanted = filter.value.trim().toUpperCase();
  fillTable(table, [...quotes.values()].sort((a, b) => a.symbol.localeCompare(b.symbol)).filter((q) => q.symbol.includes(wanted)).map((q) => {
    const instrument = instruments.get(q.symbol);
    const d = instrument ? decimalsOf(instrument.tick_size) : undefined;
    return h('tr', { 'data-key': q.symbol },
      td(h('a', { href: `/markets/${q.symbol}` }, q.symbol), '', 'Symbol'),
      td(num(q.mark_price, d), 'num', 'Mark price'),
      td(num(q.index_price, d), 'num', 'Index'),
      td(pct(q.funding_rate, 4), 'num', 'Funding'),
      td(instrument ? `${instrument.max_leverage}×` : '—', 'num', 'Max leverage'));
  }));
}

const poll = every(3000, load);
filter.addEventListener('input', render);
// Signed in, every mark price arrives over the socket; the table redraws at most once a second.
const redraw = throttle(1000, render);
connectLive(['mark_price'], (message) => {
  if (message.type !== 'mark_price' || !message.data?.symbol) return;
  quotes.set(message.data.symbol, { ...quotes.get(message.data.symbol), ...message.data });
  redraw();
}, (state) => poll.setPeriod(state === 'open' ? 30000 : 3000));
