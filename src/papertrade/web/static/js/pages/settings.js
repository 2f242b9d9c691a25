// Settings → API keys: native keys with a note and read/write scope, shown once; list; revoke.
// /v1/user/api-keys (session cookie only).

import { del, get, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { ago, time } from '../format.js';
import { busy, confirmDialog, onSubmit, showSecretOnce, toast } from '../ui.js';

const table = $('#keys-table');

async function load() {
  const keys = await get('/v1/user/api-keys');
  fillTable(table, keys.map((k) => {
    let action = '';
    if (!k.revoked_at) {
      action = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Revoke key ${k.prefix}…` }, 'Revoke');
      action.addEventListener('click', () => busy(action, async () => {
        if (!(await confirmDialog(`Revoke key ${k.prefix}…${k.note ? ` (${k.note})` : ''}? Scripts using it stop working at once.`, 'Revoke'))) return;
        try {
          await del(`/v1/user/api-keys/${k.id}`);
          toast('Key revoked.', 'success');
          await load();
        } catch (error) {
          toast(error.message, 'error');
        }
      }));
    }
    return h('tr', { 'data-key': k.id, 'data-key-id': k.id, class: k.revoked_at ? 'revoked' : null },
      td(h('span', { class: 'truncate cell-note', title: k.note }, k.note || '—'), '', 'Note'),
      td(h('span', { class: `badge badge-${k.scope}` }, k.scope), '', 'Scope'),
      td(h('code', {}, `${k.prefix}…`), '', 'Key'),
      td(time(k.created_at), '', 'Created'),
      td(ago(k.last_used_at), '', 'Last used'),
      td(k.revoked_at ? h('span', { class: 'badge badge-off' }, `revoked ${ago(k.revoked_at)}`) : h('span', { class: 'badge badge-on' }, 'active'), '', 'Status'),
      td(action, 'actions', '', k.revoked_at ? 'revoked' : 'active'));
  }));
}

onSubmit($('#create-key'), async (data, form) => {
  const created = await post('/v1/user/api-keys', {
    note: String(data.get('note') || '').trim(),
    scope: data.get('scope'),
  });
  form.reset();
  showSecretOnce($('#key-once'), `Your new ${created.scope} key`, [
    { label: 'API key', value: created.key, id: 'new-native-key' },
  ], 'Copy the key now and keep it safe: it is shown only this once and cannot be retrieved later. Send it as "Authorization: Bearer <key>".');
  await load();
});

// Bots that speak Binance's API use a portfolio's key pair: link each portfolio's setups.
async function loadPortfolios() {
  const portfolios = await get('/v1/portfolios/my');
  $('#bot-portfolios').replaceChildren(...portfolios.map((p) => h('li', {},
    h('a', { href: `/app/portfolios/${p.id}#bot-setups-title` }, `${p.name} (${p.code})`))));
  if (!portfolios.length) {
    $('#bot-portfolios').append(h('li', {}, h('a', { href: '/app' }, 'Create a portfolio on the dashboard first')));
  }
}

load().catch((error) => toast(error.message, 'error'));
loadPortfolios().catch((error) => toast(error.message, 'error'));
