// The inbox page's channel cards: Telegram signals (the bot's private chat and connected
// channels), what the bot sent, email frequency and mail history, and the Finnhub sources
// with each one's event history and optional portfolio.
// /v1/tg/signals, /v1/tg/channels, /v1/tg/messages, /v1/user/email/*, /v1/webhook-sources.

import { api, del, get, post } from '../api.js';
import { $, h } from '../dom.js';
import { ago } from '../format.js';
import { busy, ready, toast } from '../ui.js';

let portfolios = [];

async function loadPortfolios() {
  portfolios = await get('/v1/portfolios/my');
}

function portfolioSelect(label, chosen) {
  const select = h('select', { 'aria-label': label }, h('option', { value: '' }, 'Off'),
    ...portfolios.map((p) => h('option', { value: p.id }, p.name)));
  select.value = chosen === null || chosen === undefined ? '' : String(chosen);
  return select;
}

function statusLine(row, extra = '') {
  return h('li', { 'data-status': row.status },
    h('span', { class: `badge status-${row.status}` }, row.status), ' ',
    h('span', { class: 'muted' }, ago(row.created_at)), ' ', extra,
    row.error ? h('p', { class: 'muted' }, row.error) : null);
}

function fillList(list, empty, items) {
  list.replaceChildren(...items);
  empty.hidden = items.length > 0;
}

// -- Telegram ----------------------------------------------------------------------------------

export async function telegramSignals(status) {
  $('#tg-signals').hidden = !status.bound;
  if (!status.bound) return;
  const select = $('#tg-signal-portfolio');
  select.replaceChildren(h('option', { value: '' }, 'Off'),
    ...portfolios.map((p) => h('option', { value: p.id }, p.name)));
  select.value = status.signal_portfolio_id ? String(status.signal_portfolio_id) : '';
  if (status.signal_size_percent) $('#tg-signal-size').value = String(status.signal_size_percent);
  await telegramChannels();
}

$('#tg-signal-save').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  try {
    const chosen = $('#tg-signal-portfolio').value;
    await api('PUT', '/v1/tg/signals', {
      portfolio_id: chosen ? Number(chosen) : null,
      size_percent: $('#tg-signal-size').value || '5',
    });
    toast('Saved.');
  } catch (error) {
    toast(error.message, 'error');
  }
}));

async function telegramChannels() {
  const channels = await get('/v1/tg/channels');
  fillList($('#tg-channels'), $('#tg-channels-empty'), channels.map((c) => {
    const select = portfolioSelect(`Portfolio for ${c.title}`, c.portfolio_id);
    select.addEventListener('change', async () => {
      try {
        await api('PUT', `/v1/tg/channels/${c.chat_id}`, {
          portfolio_id: select.value ? Number(select.value) : null,
          size_percent: String(c.size_percent),
        });
        toast(`${c.title}: saved.`);
      } catch (error) {
        toast(error.message, 'error');
      }
    });
    const remove = h('button', { type: 'button', class: 'btn btn-small btn-danger' }, 'Disconnect');
    remove.addEventListener('click', () => busy(remove, async () => {
      await del(`/v1/tg/channels/${c.chat_id}`);
      await telegramChannels();
    }));
    return h('li', { 'data-chat': c.chat_id }, h('strong', {}, c.title || String(c.chat_id)), ' ',
      select, ' ', remove);
  }));
}

async function telegramHistory() {
  const { messages } = await get('/v1/tg/messages?limit=30');
  fillList($('#tg-history'), $('#tg-history-empty'),
    messages.map((m) => statusLine(m, h('span', {}, m.text.replace(/<[^>]+>/g, '').slice(0, 140)))));
}

// -- Email -------------------------------------------------------------------------------------

export async function email(state) {
  $('#email-address').textContent = `${state.email}${state.verified ? ' (confirmed)' : ' (not confirmed yet)'}`;
  $('#email-frequency').value = state.frequency || 'instant';
  const { messages } = await get('/v1/user/email/messages?limit=30');
  fillList($('#email-history'), $('#email-history-empty'),
    messages.map((m) => statusLine(m, h('span', {}, m.subject))));
}

$('#email-frequency').addEventListener('change', async (event) => {
  try {
    await api('PUT', '/v1/user/email/frequency', { frequency: event.currentTarget.value });
    toast('Saved.');
  } catch (error) {
    toast(error.message, 'error');
  }
});

// -- Finnhub sources ---------------------------------------------------------------------------

async function events(source, list) {
  const { events: rows } = await get(`/v1/webhook-sources/${source.id}/events?limit=30`);
  list.replaceChildren(...(rows.length ? rows.map((e) => h('li', {},
    h('span', { class: 'muted' }, ago(e.received_at)), ' ', h('code', {}, e.body.slice(0, 120)), ' → ',
    h('span', { class: 'outcome' }, e.processed_at ? e.outcome : 'waiting'))) : [h('li', { class: 'muted' }, 'No alert received yet.')]));
}

function sourceItem(source) {
  const select = portfolioSelect(`Portfolio traded by source ${source.id}`, source.signal_portfolio_id);
  const action = h('select', { 'aria-label': `Action of source ${source.id}` },
    ...['buy', 'sell', 'close'].map((a) => h('option', { value: a }, a)));
  action.value = source.signal_action || 'buy';
  const save = async () => {
    try {
      await api('PUT', `/v1/webhook-sources/${source.id}/signal`, {
        portfolio_id: select.value ? Number(select.value) : null, action: action.value,
      });
      toast('Saved.');
    } catch (error) {
      toast(error.message, 'error');
    }
  };
  select.addEventListener('change', save);
  action.addEventListener('change', save);
  const history = h('ul', { class: 'list source-events' });
  const details = h('details', {}, h('summary', {}, 'History'), history);
  details.addEventListener('toggle', () => { if (details.open) events(source, history).catch((e) => toast(e.message, 'error')); });
  const revoke = h('button', { type: 'button', class: 'btn btn-small btn-danger' }, 'Disconnect');
  revoke.addEventListener('click', () => busy(revoke, async () => {
    await del(`/v1/webhook-sources/${source.id}`);
    await sources();
  }));
  const revoked = source.revoked_at !== null;
  return h('li', { 'data-source': source.id },
    h('strong', {}, source.note || `Finnhub #${source.id}`), revoked ? ' (disconnected)' : '', ' ',
    h('code', { class: 'truncate' }, source.url),
    revoked ? null : h('div', { class: 'form-row' }, 'Trade', select, action, revoke),
    details);
}

async function sources() {
  const rows = await get('/v1/webhook-sources');
  fillList($('#sources'), $('#sources-empty'), rows.map(sourceItem));
}

$('#source-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  try {
    const made = await post('/v1/webhook-sources', { provider: 'finnhub', note: form.elements.note.value });
    const box = $('#source-secret');
    box.replaceChildren('Secret (shown once; Finnhub sends it as X-Finnhub-Secret): ', h('code', { id: 'source-secret-value' }, made.secret));
    box.hidden = false;
    form.reset();
    await sources();
  } catch (error) {
    toast(error.message, 'error');
  }
});
ready($('#source-form'));

export async function loadChannels() {
  await loadPortfolios();
  await Promise.all([sources(), telegramHistory()]);
}
