// One market: live quote and a candlestick chart (lightweight-charts).
// /v1/market/symbols, /v1/market/quotes?symbol=, /v1/market/klines?symbol=&interval=.

import { get } from '../api.js';
import { h, $, $$ } from '../dom.js';
import { candleChart } from '../charts.js';
import { countdown, decimalsOf, num, pct } from '../format.js';
import { instruments, loadInstruments } from '../instruments.js';
import { connectLive, every } from '../live.js';

const symbol = $('#market').dataset.symbol;
const errorLine = $('#market-error');
let interval = '1m';
let decimals;
let lastQuote = null;
let onInterval = () => {};
const chart = candleChart($('#candles'));

async function loadInstrument() {
  await loadInstruments();
  const instrument = instruments.get(symbol);
  if (!instrument) {
    errorLine.textContent = `${symbol} is not a listed perpetual.`;
    return false;
  }
  decimals = decimalsOf(instrument.tick_size);
  chart.setTick(instrument.tick_size);
  const rows = [
    ['Base asset', instrument.base_asset],
    ['Quote asset', instrument.quote_asset],
    ['Tick size', num(instrument.tick_size, decimals)],
    ['Step size', num(instrument.step_size, decimalsOf(instrument.step_size))],
    ['Min. notional', `${num(instrument.min_notional, 2)} USDT`],
    ['Max. leverage', `${instrument.max_leverage}×`],
  ];
  $('#contract').replaceChildren(...rows.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))));
  return true;
}

function showQuote(quote) {
  lastQuote = quote;
  const big = $('#mark-price');
  const previous = Number(big.dataset.value || 0);
  big.textContent = num(quote.mark_price, decimals);
  big.dataset.value = quote.mark_price;
  big.classList.toggle('up', previous && quote.mark_price > previous);
  big.classList.toggle('down', previous && quote.mark_price < previous);
  $('#index-price').textContent = num(quote.index_price, decimals);
  $('#last-price').textContent = num(quote.last_price, decimals);
  $('#funding-rate').textContent = pct(quote.funding_rate, 4);
  document.title = `${num(quote.mark_price, decimals)} ${symbol} · Papertrade`;
}

async function loadQuote() {
  const [quote] = await get(`/v1/market/quotes?symbol=${symbol}`);
  if (quote) showQuote(quote);
}

async function loadCandles(reset) {
  try {
    const klines = await get(`/v1/market/klines?symbol=${symbol}&interval=${interval}&limit=${reset ? 500 : 2}`);
    if (reset) chart.setKlines(klines);
    else klines.forEach((k) => chart.update(k));
    errorLine.textContent = '';
  } catch (error) {
    errorLine.textContent = error.message;
  }
}

for (const button of $$('#intervals [data-interval]')) {
  button.addEventListener('click', () => {
    interval = button.dataset.interval;
    for (const b of $$('#intervals [data-interval]')) b.setAttribute('aria-pressed', String(b === button));
    loadCandles(true);
    onInterval();
  });
}

setInterval(() => {
  if (lastQuote) $('#next-funding').textContent = countdown(lastQuote.next_funding_time);
}, 1000);

if (await loadInstrument()) {
  await loadCandles(true);
  const quotes = every(2000, loadQuote);
  const candles = every(2000, () => loadCandles(false));
  // Signed in, the socket streams the mark price and the current candle; polling otherwise.
  const channels = () => [`mark_price:${symbol}`, `kline:${symbol}:${interval}`];
  const live = connectLive(channels(), (message) => {
    const data = message.data || {};
    if (message.type === 'mark_price' && data.symbol === symbol) showQuote(data);
    else if (message.type === 'kline' && data.interval === interval) chart.update(data);
  }, (state) => {
    quotes.setPeriod(state === 'open' ? 30000 : 2000);
    candles.setPeriod(state === 'open' ? 30000 : 2000);
  });
  onInterval = () => live.setChannels(channels());
}
