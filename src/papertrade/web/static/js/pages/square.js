// The public square: GET /v1/portfolios/square (no sign-in needed).

import { get } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { percent, pnlClass, usd } from '../format.js';
import { every } from '../live.js';

const table = $('#square-table');
const more = $('#square-more');
const sort = $('#sort');
const PAGE = 20;
let shown = PAGE;

async function load() {
  try {
    const page = await get(`/v1/portfolios/square?sort=${sort.value}&order=${sort.value === 'drawdown' ? 'asc' : 'desc'}&limit=${Math.min(shown, 100)}`, { on401: 'throw' });
    fillTable(table, page.items.map((p, i) => h('tr', { 'data-key': p.code, 'data-code': p.code },
      td(String(i + 1), 'muted', '#'),
      td(h('div', { class: 'cell-name' },
        h('a', { href: `/p/${p.code}`, class: 'truncate', title: p.name }, p.name),
        h('span', { class: 'code' }, p.code)), '', 'Portfolio'),
      td(usd(p.equity), 'num', 'Equity'),
      td(percent(p.return_pct), `num ${pnlClass(p.return_pct)}`, 'Return'),
      td(percent(-Math.abs(p.max_drawdown_pct)), 'num', 'Max drawdown'),
      td(String(p.trades), 'num', 'Trades'),
      td(p.win_rate === null ? '—' : `${(Number(p.win_rate) * 100).toFixed(0)}%`, 'num', 'Win rate'))));
    more.hidden = page.total <= page.items.length || shown >= 100;
    $('#square-error').textContent = '';
  } catch (error) {
    $('#square-error').textContent = error.message;
  }
}

const poll = every(15000, load);
sort.addEventListener('change', () => poll.now());
more.addEventListener('click', () => {
  shown += PAGE;
  poll.now();
});
