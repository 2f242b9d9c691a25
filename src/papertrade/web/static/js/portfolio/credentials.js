// The API Keys panel (compatible key pairs) and the Webhook panel (tokens and the alert message).
// /v1/portfolios/{id}/api-keys and /v1/portfolios/{id}/webhook-tokens (session cookie only).

import { del, get, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { ago, time } from '../format.js';
import { busy, confirmDialog, onSubmit, showSecretOnce, toast } from '../ui.js';
import { setupBotSetups } from './bot-setups.js';

// Ready-to-paste TradingView alert messages (docs/webhooks.md). The JSON one gives the
// strategy's resulting position as a target; TradingView fills in the {{…}} placeholders.
export const TV_STRATEGY_MESSAGE = JSON.stringify({
  symbol: '{{ticker}}',
  action: '{{strategy.order.action}}',
  qty: '{{strategy.order.contracts}}',
  position_size: '{{strategy.position_size}}',
  time: '{{timenow}}',
  idempotency_key: '{{ticker}}-{{timenow}}-{{strategy.order.id}}',
}, null, 1);
export const TV_TEXT_MESSAGE = '{{strategy.order.action}} {{ticker}} {{strategy.order.contracts}}';

function status(row) {
  return row.revoked_at ? h('span', { class: 'badge badge-off' }, 'revoked') : h('span', { class: 'badge badge-on' }, 'active');
}

export function setupCredentials({ root, portfolioId }) {
  const base = `/v1/portfolios/${portfolioId}`;
  const compatTable = $('#compat-table', root);
  const webhookTable = $('#webhook-table', root);
  $('#tv-message', root).value = TV_STRATEGY_MESSAGE;
  $('#tv-message-text', root).value = TV_TEXT_MESSAGE;
  const bots = setupBotSetups(root, TV_STRATEGY_MESSAGE);

  function revokeButton(label, name, path, after) {
    const button = h('button', { type: 'button', class: 'btn btn-small btn-danger' }, label);
    button.setAttribute('aria-label', `${label} ${name}`);
    button.addEventListener('click', () => busy(button, async () => {
      if (!(await confirmDialog(`${label} ${name}? It stops working at once; this cannot be undone.`, label))) return;
      try {
        await del(path);
        toast(`${name} revoked.`, 'success');
        await after();
      } catch (error) {
        toast(error.message, 'error');
      }
    }));
    return button;
  }

  async function loadCompat(created) {
    const rows = await get(`${base}/api-keys`);
    bots.setKeys(rows, created);
    fillTable(compatTable, rows.map((k) => h('tr', { 'data-key': k.id, 'data-key-id': k.id, class: k.revoked_at ? 'revoked' : null },
      td(h('span', { class: 'truncate cell-note', title: k.note }, k.note || '—'), '', 'Note'),
      td(h('code', {}, `${k.prefix}…`), '', 'Key'),
      td(time(k.created_at), '', 'Created'),
      td(ago(k.last_used_at), '', 'Last used'),
      td(status(k), '', 'Status'),
      td(k.revoked_at ? '' : revokeButton('Delete', `key ${k.prefix}…`, `${base}/api-keys/${k.id}`, () => loadCompat()), 'actions', '', k.revoked_at ? 'revoked' : 'active'))));
  }

  async function loadWebhooks() {
    const rows = await get(`${base}/webhook-tokens`);
    fillTable(webhookTable, rows.map((t) => h('tr', { 'data-key': t.id, 'data-token-id': t.id, class: t.revoked_at ? 'revoked' : null },
      td(h('code', {}, `${t.prefix}…`), '', 'Token'),
      td(time(t.created_at), '', 'Created'),
      td(ago(t.last_used_at), '', 'Last used'),
      td(status(t), '', 'Status'),
      td(t.revoked_at ? '' : revokeButton('Revoke', `webhook ${t.prefix}…`, `${base}/webhook-tokens/${t.id}`, loadWebhooks), 'actions', '', t.revoked_at ? 'revoked' : 'active'))));
  }

  onSubmit($('#compat-form', root), async (data, form) => {
    const created = await post(`${base}/api-keys`, { note: String(data.get('note') || '').trim() });
    form.reset();
    showSecretOnce($('#compat-once', root), 'Your new key pair', [
      { label: 'API key', value: created.api_key, id: 'new-api-key' },
      { label: 'API secret', value: created.api_secret, id: 'new-api-secret' },
    ], 'Copy the secret now and keep it safe: it is shown only this once and cannot be retrieved later. If you lose it, delete the pair and create a new one.');
    await loadCompat(created);
  });

  onSubmit($('#webhook-form', root), async () => {
    const created = await post(`${base}/webhook-tokens`);
    showSecretOnce($('#webhook-once', root), 'Your webhook URL', [
      { label: 'Webhook URL', value: created.url, id: 'new-webhook-url' },
    ], 'Copy the URL now: it contains the secret token and is shown only this once. Anyone with it can trade this portfolio, so revoke it if it leaks.');
    bots.setWebhookUrl(created.url);
    await loadWebhooks();
  });

  return {
    async refresh() {
      await Promise.all([loadCompat(), loadWebhooks()]);
    },
  };
}
