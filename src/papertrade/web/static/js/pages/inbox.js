// The inbox: notifications (live over the WebSocket's `inbox` channel), mark read, delete,
// channel preferences per kind, the Telegram binding and the email banner.
// /v1/inbox, /v1/inbox/preferences, /v1/tg/*, /v1/user/email.

import { api, del, get, post } from '../api.js';
import { bell } from '../common.js';
import { fillTable, h, td, $ } from '../dom.js';
import { ago } from '../format.js';
import { busy, toast } from '../ui.js';
import { email, loadChannels, telegramSignals } from '../notify/channels.js';
import { suppressedMail } from '../notify/suppressed.js';

const list = $('#inbox-list');
const kindSelect = $('#inbox-kind');
const unreadOnly = $('#inbox-unread');
let oldest = null;

// What a notification is about (its portfolio, by name and code), linking to its page.
function about(n) {
  const d = n.data || {};
  const label = d.portfolio_name && d.portfolio_code ? `${d.portfolio_name} (${d.portfolio_code})` : null;
  if (!n.link && !label) return null;
  const text = label ? `Portfolio ${label}` : 'Open its page';
  return h('p', { class: 'inbox-about muted' }, n.link ? h('a', { href: n.link }, text) : text);
}

function item(n) {
  const read = h('button', { type: 'button', class: 'btn btn-small' }, 'Mark read');
  read.hidden = Boolean(n.read_at);
  read.addEventListener('click', () => busy(read, async () => {
    await post(`/v1/inbox/${n.id}/read`);
    await reload();
  }));
  const remove = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Delete ${n.title}` }, 'Delete');
  remove.addEventListener('click', () => busy(remove, async () => {
    await del(`/v1/inbox/${n.id}`);
    await reload();
  }));
  return h('li', { class: n.read_at ? 'read' : 'unread', 'data-id': n.id },
    h('strong', {}, n.title), ' ', h('span', { class: 'muted' }, ago(n.created_at)),
    about(n), h('p', {}, n.body), read, ' ', remove);
}

// Reloads can overlap (a push arrives while the first read is out): only the newest one's
// answer is shown, replacing the list at once, so no notification is listed twice.
let generation = 0;

async function page(before) {
  const mine = generation;
  const params = new URLSearchParams({ limit: '30' });
  if (kindSelect.value) params.set('kind', kindSelect.value);
  if (unreadOnly.checked) params.set('unread', 'true');
  if (before) params.set('before_id', String(before));
  const result = await get(`/v1/inbox?${params}`);
  if (mine !== generation) return;
  const items = result.notifications.map(item);
  if (before) list.append(...items);
  else list.replaceChildren(...items);
  oldest = result.next_before_id;
  $('#inbox-more').hidden = oldest === null;
  $('#inbox-empty').hidden = list.children.length > 0;
  const badge = document.getElementById('inbox-count');
  if (badge) {
    badge.textContent = String(result.unread_count);
    badge.hidden = result.unread_count === 0;
  }
}

async function reload() {
  generation += 1;
  await page(null);
}

async function preferences() {
  const { preferences: rows } = await get('/v1/inbox/preferences');
  if (kindSelect.options.length === 1) {
    for (const p of rows) kindSelect.append(h('option', { value: p.kind }, p.kind));
  }
  fillTable($('#prefs-table'), rows.map((p) => h('tr', { 'data-key': p.kind },
    td(h('span', { title: p.description }, p.kind), '', 'Kind'),
    ...['inbox', 'telegram', 'email'].map((channel) => {
      const box = h('input', { type: 'checkbox', 'aria-label': `${p.kind} by ${channel}` });
      box.checked = p[channel];
      if (p.always.includes(channel)) { // security notices always reach the inbox
        box.disabled = true;
        box.title = 'Always on: cannot be turned off';
      }
      box.addEventListener('change', async () => {
        try {
          await api('PUT', '/v1/inbox/preferences', { preferences: { [p.kind]: { [channel]: box.checked } } });
        } catch (error) {
          box.checked = !box.checked;
          toast(error.message, 'error');
        }
      });
      return td(box, '', channel);
    }))));
}

let boundAt = null; // when the binding shown was made: a new binding changes it
let watch = 0; // the link being watched (a new link ends the watch of the one before)

async function telegram() {
  const status = await get('/v1/tg/status');
  boundAt = status.bound ? status.bound_at : null;
  const text = status.bound
    ? `Linked${status.username ? ` to @${status.username}` : ''}${status.status === 'inactive' ? ' — inactive: you blocked the bot; link again to resume' : ''}.`
    : 'Not linked.';
  $('#tg-status').textContent = text;
  $('#tg-unbind').hidden = !status.bound;
  await telegramSignals(status);
}

$('#tg-link').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  try {
    const link = await post('/v1/tg/link');
    const anchor = $('#tg-url');
    anchor.href = link.url;
    anchor.textContent = link.url;
    $('#tg-qr').src = link.qr_svg;
    $('#tg-open').hidden = false;
    watchBinding(link.expires_at);
  } catch (error) {
    toast(error.message, 'error');
  }
}));

// The binding happens in Telegram (the user taps Start, the bot's webhook binds): while the link
// works, ask every 2 s whether a new binding was made, so this page says so without a reload.
// An expired link is taken away (it no longer works; Link Telegram makes a new one).
function watchBinding(expiresAt) {
  const mine = ++watch;
  const look = async () => {
    if (mine !== watch) return;
    if (Date.now() >= expiresAt) {
      $('#tg-open').hidden = true;
      return;
    }
    let status = null;
    try {
      status = await get('/v1/tg/status');
    } catch {
      // a missed look: the next one asks again
    }
    if (mine !== watch) return;
    if (status && status.bound && status.bound_at !== boundAt) {
      watch += 1;
      $('#tg-open').hidden = true;
      await telegram();
      toast(`Telegram linked${status.username ? ` to @${status.username}` : ''}.`, 'success');
      return;
    }
    setTimeout(look, 2000);
  };
  setTimeout(look, 2000);
}

$('#tg-unbind').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  await del('/v1/tg/binding');
  await telegram();
}));

$('#read-all').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  await post('/v1/inbox/read_all', kindSelect.value ? { kind: kindSelect.value } : {});
  await reload();
  await bell();
}));
$('#inbox-more').addEventListener('click', () => page(oldest));
kindSelect.addEventListener('change', reload);
unreadOnly.addEventListener('change', reload);

// The suppression list is by address: a new address (changed on the profile page) has mail again.
async function emailBanner() {
  const state = await get('/v1/user/email');
  await email(state);
  const box = $('#email-banner');
  const stopped = suppressedMail(state);
  box.hidden = stopped === null;
  box.replaceChildren(...(stopped === null ? [] : [
    `${stopped}: only account mail is sent to it. `,
    h('a', { href: '/app/profile#email-title' }, 'Change your address'),
    ' to get notifications by email again.',
  ]));
}

// Live: a new notification is shown at once (the socket authenticates with the session cookie).
function live() {
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/ws`);
  socket.addEventListener('open', () => socket.send(JSON.stringify({ op: 'subscribe', channels: ['inbox'] })));
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    if (message.type === 'notification.created') {
      reload().catch(() => {});
    }
  });
  socket.addEventListener('close', () => setTimeout(live, 5000));
}

// The portfolios (for the signal choosers) first, then everything else.
loadChannels()
  .then(() => Promise.all([reload(), preferences(), telegram(), emailBanner()]))
  .catch((error) => toast(error.message, 'error'));
live();
