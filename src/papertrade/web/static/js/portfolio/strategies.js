// The strategies trading a portfolio (GET /v1/portfolios/{id}/strategies): named and linked in
// the page's head, with their state, so a position a strategy opened is never a mystery. Their
// signals are in the Signals tab (views.signals).

import { $, h } from '../dom.js';

const STATUS = { running: 'running', paused: 'paused' };

export function showStrategies(root, deployed) {
  const box = $('#pf-strategies', root);
  if (!box) return;
  const list = $('#pf-strategies-list', box);
  list.replaceChildren(...deployed.flatMap((d, i) => [
    i ? ', ' : null,
    h('a', { href: `/app/strategies/${d.strategy_id}#live`, 'data-strategy-id': d.strategy_id }, d.strategy_name),
    ' ',
    h('span', { class: 'muted' }, `(${d.strategy_code} v${d.version}, ${d.symbol} ${d.timeframe})`),
    ' ',
    h('span', { class: `badge status-${d.status}`, title: d.last_error || null }, STATUS[d.status] || d.status),
  ].filter((part) => part !== null)));
  $('#pf-strategies-label', box).textContent = deployed.length > 1 ? 'Strategies trading here:' : 'Strategy trading here:';
  box.hidden = deployed.length === 0;
}
