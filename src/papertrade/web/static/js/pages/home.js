// Landing page: a few live prices. /v1/market/quotes.

import { get } from '../api.js';
import { h, td, $ } from '../dom.js';
import { num, pct } from '../format.js';
import { every } from '../live.js';

const FEATURED = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'BNBUSDT', 'XRPUSDT', 'DOGEUSDT'];

every(5000, async () => {
  const quotes = await get('/v1/market/quotes');
  const shown = quotes.filter((q) => FEATURED.includes(q.symbol));
  $('#home-quotes').tBodies[0].replaceChildren(...shown.map((q) => h('tr', {},
    td(h('a', { href: `/markets/${q.symbol}` }, q.symbol)),
    td(num(q.mark_price), 'num'),
    td(pct(q.funding_rate, 4), 'num'))));
});
