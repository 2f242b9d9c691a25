// The waitlist: join (with a referral code from ?ref=), confirm from the e-mailed link (a POST:
// opening the page confirms, a mail scanner fetching it does not), see your place and your
// referral link. docs/launch.md.

import { get, post } from '../api.js';
import { $ } from '../dom.js';
import { onSubmit, wireCopyButtons } from '../ui.js';

function show(standing) {
  $('#standing').hidden = false;
  $('#wl-position').textContent = standing.position ?? '—';
  $('#wl-state').textContent = standing.invited
    ? 'You are invited: the code is in your inbox.'
    : standing.verified ? 'Confirmed: you hold this place.' : 'Not confirmed yet: open the link in our e-mail.';
  $('#wl-referrals').textContent = String(standing.referrals);
  $('#wl-link').value = standing.referral_url;
  $('#wl-bookmark').href = `/waitlist?me=${encodeURIComponent(standing.referral_code)}`;
}

async function start() {
  const params = new URLSearchParams(location.search);
  const box = $('#waitlist');
  try {
    if (box.dataset.verifying) {
      const token = params.get('token') || '';
      const standing = await post('/v1/launch/waitlist/verify', { token }, { on401: 'throw' });
      $('#waitlist-title').textContent = 'Your place is confirmed';
      show(standing);
    } else if (params.get('me')) {
      show(await get(`/v1/launch/waitlist/position?referral_code=${encodeURIComponent(params.get('me'))}`, { on401: 'throw' }));
    }
  } catch (error) {
    if (box.dataset.verifying) $('#waitlist-title').textContent = 'This link does not work';
    $('#waitlist-error').textContent = error.message;
  }
}

const form = $('#waitlist-form');
if (form) {
  onSubmit(form, async (data) => {
    const body = { email: String(data.get('email') || '').trim() };
    const ref = String(data.get('referral_code') || '').trim();
    if (ref) body.referral_code = ref;
    const accepted = await post('/v1/launch/waitlist', body, { on401: 'throw' });
    form.hidden = true;
    $('#waitlist-sent').hidden = false;
    $('#waitlist-sent').textContent = accepted.msg;
  });
}

wireCopyButtons();
start();
