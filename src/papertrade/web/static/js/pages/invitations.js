// Invitations: my codes, how far each is used, and its sign-up link to copy. docs/launch.md.

import { get } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { time } from '../format.js';
import { copyButton, toast } from '../ui.js';

function state(code) {
  if (!code.enabled) return 'disabled';
  if (code.expires_at !== null && code.expires_at <= Date.now()) return 'expired';
  if (code.max_uses !== null && code.use_count >= code.max_uses) return 'used';
  return 'live';
}

async function load() {
  const codes = await get('/v1/launch/invitations');
  fillTable($('#invite-codes'), codes.map((code) => {
    const link = `${location.origin}/signup?code=${encodeURIComponent(code.code)}`;
    const live = state(code) === 'live';
    return h('tr', { 'data-key': code.code },
      td(h('code', {}, code.code), '', 'Code'),
      td(`${code.use_count} / ${code.max_uses ?? '∞'}`, 'num', 'Used'),
      td(code.expires_at ? time(code.expires_at) : 'never', '', 'Expires'),
      td(state(code), '', 'State'),
      td(live ? h('span', { class: 'row' }, h('input', { readonly: true, value: link, 'aria-label': `Sign-up link for ${code.code}` }), copyButton(link, 'Copy link')) : '—', '', 'Link'));
  }));
}

load().catch((error) => toast(error.message, 'error'));
