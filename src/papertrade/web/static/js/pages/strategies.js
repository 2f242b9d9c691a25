// Strategies: the user's strategies, and a form that creates one (DSL or Python) from an
// example and opens its editor. Data: GET /v1/strategies/my, POST /v1/strategies.

import { get, post } from '../api.js';
import { $, fillTable, h, td } from '../dom.js';
import { ago } from '../format.js';
import { every } from '../live.js';
import { plainError } from '../strategy/errors.js';
import { EXAMPLES } from '../strategy/examples.js';
import { onSubmit } from '../ui.js';

const table = $('#st-table');
const empty = $('#st-empty');

function row(s) {
  return h('tr', { dataset: { key: String(s.id) } },
    td(h('a', { href: `/app/strategies/${s.id}`, class: 'cell-name wrap' }, s.name), '', 'Name'),
    td(h('span', { class: 'code' }, s.code), '', 'Code'),
    td(s.kind === 'python' ? 'Python' : 'DSL', '', 'Kind'),
    td(`v${s.latest_version}`, 'num', 'Version'),
    td(s.visibility === 'public' ? 'Public' : 'Private', '', 'Visibility'),
    td(ago(s.updated_at), '', 'Updated'),
  );
}

async function load() {
  const mine = await get('/v1/strategies/my');
  fillTable(table, mine.map(row));
  table.removeAttribute('aria-busy');
  empty.hidden = mine.length > 0;
  table.hidden = mine.length === 0;
}

onSubmit($('#create-strategy'), async (data) => {
  const kind = data.get('kind') === 'python' ? 'python' : 'dsl';
  try {
    const created = await post('/v1/strategies', {
      kind,
      name: String(data.get('name') || '').trim(),
      description: String(data.get('description') || ''),
      source: EXAMPLES[kind],
      visibility: data.get('public') ? 'public' : 'private',
    });
    location.assign(`/app/strategies/${created.id}`);
  } catch (error) {
    throw new Error(plainError(error));
  }
});

every(30000, load);
