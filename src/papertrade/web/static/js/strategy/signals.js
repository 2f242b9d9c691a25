// Signal history rows, shared by the strategy page and the public strategy page. Pages are
// newest first; "Load older" asks for the page before the oldest shown (`before_id`).

import { get } from '../api.js';
import { fillTable, h, td } from '../dom.js';
import { num, time } from '../format.js';

export const OUTCOME_CLASS = { executed: 'outcome-executed', refused: 'outcome-rejected', skipped: 'outcome-ignored' };

export function intentText(intent) {
  if (!intent || !intent.action) return '—';
  // qty_type as the live executor sends it: percent_equity, quote (USDT) or base (contracts).
  const unit = { percent_equity: '% of equity', quote: ' USDT', base: '' }[intent.qty_type] ?? '';
  const size = intent.qty === undefined || intent.qty === null ? '' : ` ${num(intent.qty)}${unit}`;
  return `${intent.action}${size} ${intent.symbol || ''}`.trim();
}

function row(signal, withVersion) {
  return h('tr', { dataset: { key: String(signal.id) } },
    td(time(signal.time), '', 'Time'),
    td(time(signal.bar_time), '', 'Bar'),
    withVersion ? td(`v${signal.version}`, '', 'Version') : null,
    td(h('span', { class: 'wrap' }, signal.rule || '—'), '', 'Rule'),
    td(intentText(signal.intent), '', 'Order'),
    td([
      h('span', { class: `outcome ${OUTCOME_CLASS[signal.outcome] || ''}` }, signal.outcome),
      signal.reason ? h('span', { class: 'cell-note' }, ` ${signal.reason}`) : null,
    ], '', 'Outcome'),
  );
}

/**
 * The signal table of `strategyId`: `refresh()` re-reads the newest page (merging, so older
 * pages already loaded stay), `more()` appends the next older page.
 */
export function signalHistory(strategyId, table, moreButton, { withVersion = true, limit = 50 } = {}) {
  const byId = new Map();
  let before = undefined; // the next older page's before_id; null: no more
  const draw = () => {
    const sorted = [...byId.values()].sort((a, b) => b.id - a.id);
    fillTable(table, sorted.map((s) => row(s, withVersion)));
    moreButton.hidden = before === null || before === undefined;
  };
  const read = async (beforeId) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (beforeId) query.set('before_id', String(beforeId));
    return get(`/v1/strategies/${strategyId}/signals?${query}`);
  };
  const api = {
    async refresh() {
      const page = await read(null);
      for (const s of page.signals) byId.set(s.id, s);
      if (before === undefined) before = page.next_before_id;
      draw();
    },
    async more() {
      if (!before) return;
      const page = await read(before);
      for (const s of page.signals) byId.set(s.id, s);
      before = page.next_before_id;
      draw();
    },
    count: () => byId.size,
  };
  moreButton.addEventListener('click', async () => {
    moreButton.disabled = true;
    try {
      await api.more();
    } finally {
      moreButton.disabled = false;
    }
  });
  return api;
}
