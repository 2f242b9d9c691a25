// A user's public profile: name, avatar, bio, public portfolios and strategies. docs/profile.md.

import { get } from '../api.js';
import { h, $ } from '../dom.js';

async function start() {
  const id = $('#public-profile').dataset.userId;
  let profile;
  try {
    profile = await get(`/v1/users/${id}/profile`, { on401: 'throw' });
  } catch {
    $('#pp-name').textContent = 'Not found';
    $('#pp-missing').hidden = false;
    $('#pp-avatar').hidden = true;
    return;
  }
  document.title = `${profile.display_name} · Papertrade`;
  $('#pp-name').textContent = profile.display_name;
  $('#pp-avatar').alt = `Avatar of ${profile.display_name}`;
  $('#pp-bio').textContent = profile.bio;
  $('#pp-portfolios').replaceChildren(...profile.portfolios.map((p) => h('li', {}, h('a', { href: `/p/${encodeURIComponent(p.code)}` }, p.name), ` (${p.code})`)));
  $('#pp-no-portfolios').hidden = profile.portfolios.length > 0;
  $('#pp-strategies').replaceChildren(...profile.strategies.map((s) => h('li', {}, s.name, ` (${s.code})`)));
  $('#pp-no-strategies').hidden = profile.strategies.length > 0;
}

start();
