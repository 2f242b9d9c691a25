// Runs on every page: the simulated-market banner, the sign-out and feedback buttons.

import { get, holdRedirects, leave, post } from './api.js';
import { feedbackButton } from './feedback.js';
import { toast } from './ui.js';

async function banner() {
  const box = document.getElementById('sim-banner');
  if (!box) return;
  try {
    const status = await get('/v1/market/status', { on401: 'throw' });
    const notes = [];
    if (status.simulated) {
      notes.push(`Simulated market feed (${status.source}): prices are generated, not Binance's.`);
    }
    if (status.stale) notes.push('Prices are stale: orders do not fill until the feed is back.');
    box.textContent = notes.join(' ');
    box.hidden = notes.length === 0;
    box.classList.toggle('banner-warn', Boolean(status.stale));
  } catch {
    box.textContent = 'The market feed is unavailable right now.';
    box.hidden = false;
  }
}

function signOut() {
  const button = document.getElementById('sign-out');
  if (!button) return;
  button.addEventListener('click', async () => {
    button.disabled = true;
    holdRedirects(); // a refresh meeting the ended session must not go to sign-in first
    try {
      await post('/v1/auth/logout', {}, { on401: 'throw' });
    } catch (error) {
      if (error.status !== 401) {
        toast(error.message, 'error');
        holdRedirects(false);
        button.disabled = false;
        return;
      }
    }
    leave('/login');
  });
}

// The bell: unread notifications, on every page of a signed-in user (the inbox page updates it
// live; elsewhere a minute-old count is good enough).
export async function bell() {
  const badge = document.getElementById('inbox-count');
  if (!badge) return;
  try {
    const { unread_count: count } = await get('/v1/inbox/unread_count', { on401: 'throw' });
    badge.textContent = String(count);
    badge.hidden = count === 0;
  } catch {
    badge.hidden = true;
  }
}

// The bell is live on every page: the inbox channel of the WebSocket says when a notification
// arrives (the count is re-read then); the minute timer stays as a safety net. The count is also
// re-read once the subscription is in: what arrived since the page's first read, or while a
// dropped socket was reconnecting, is counted too.
function liveBell() {
  if (!document.getElementById('inbox-count') || typeof WebSocket === 'undefined') return;
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/ws`);
  socket.addEventListener('open', () => socket.send(JSON.stringify({ op: 'subscribe', channels: ['inbox'] })));
  socket.addEventListener('message', (event) => {
    const { type } = JSON.parse(event.data);
    if (type === 'notification.created' || type === 'subscribed') bell();
  });
  socket.addEventListener('close', () => setTimeout(liveBell, 10000));
}

banner();
setInterval(banner, 60000);
signOut();
feedbackButton();
bell();
setInterval(bell, 60000);
liveBell();
