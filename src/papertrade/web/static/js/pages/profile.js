// Profile: about you, avatar upload with a preview, e-mail and password changes, deleting the
// account (with what it does spelled out first). docs/profile.md.

import { ApiError, cookie, get, leave, patch, post } from '../api.js';
import { $ } from '../dom.js';
import { suppressedMail } from '../notify/suppressed.js';
import { busy, confirmDialog, formError, onSubmit, toast } from '../ui.js';

const MAX_AVATAR_BYTES = 2 * 1024 * 1024;

// What the user typed while the profile was loading is theirs: the loaded values never
// overwrite a field already edited.
const edited = new Set();
$('#profile-form').addEventListener('input', (event) => edited.add(event.target.name));

async function showEmail() {
  const mail = await get('/v1/user/email');
  const stopped = suppressedMail(mail);
  $('#email-current').textContent = `Now ${mail.email} (${mail.verified ? 'confirmed' : 'not confirmed yet'}).`
    + (stopped ? ` ${stopped}: notifications are not mailed to it until you change it.` : '');
}

async function load() {
  const [me] = await Promise.all([get('/v1/user/profile'), showEmail()]);
  const form = $('#profile-form');
  const show = (name, value) => {
    if (!edited.has(name)) form.elements[name].value = value;
  };
  // The sign-up default is the e-mail address, which is never shown to others (nor accepted as
  // a name): leave the field empty until a name is chosen.
  show('display_name', me.display_name.includes('@') ? '' : me.display_name);
  show('bio', me.bio);
  show('time_zone', me.time_zone);
  show('locale', me.locale);
  edited.clear();
  $('#avatar-current').src = `${me.avatar_url}?v=${Date.now()}`;
  $('#public-link').href = `/u/${me.user_id}`;
}

function fillTimeZones() {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC'];
  $('#time-zones').replaceChildren(...zones.map((zone) => Object.assign(document.createElement('option'), { value: zone })));
}

onSubmit($('#profile-form'), async (data) => {
  const name = String(data.get('display_name') || '').trim();
  await patch('/v1/user/profile', {
    ...(name ? { display_name: name } : {}), // empty: keep the name others see now
    bio: String(data.get('bio') || ''),
    time_zone: String(data.get('time_zone') || '').trim(),
    locale: String(data.get('locale') || 'en'),
  });
  toast('Profile saved.', 'success');
  await load();
});

// The preview is the chosen file as the browser reads it, before anything is sent (a data: URL:
// the page's Content-Security-Policy allows data: images, not blob: ones).
$('#avatar-file').addEventListener('change', () => {
  const file = $('#avatar-file').files[0];
  const preview = $('#avatar-preview');
  preview.hidden = !file;
  formError($('#avatar-form'), file && file.size > MAX_AVATAR_BYTES ? new Error('The image may be at most 2 MiB.') : null);
  if (!file || file.size > MAX_AVATAR_BYTES) return;
  const reader = new FileReader();
  reader.addEventListener('load', () => { preview.src = String(reader.result); });
  reader.readAsDataURL(file);
});

async function sendAvatar(file) {
  const response = await fetch('/v1/user/avatar', {
    method: 'PUT',
    credentials: 'same-origin',
    headers: { 'Content-Type': file.type || 'application/octet-stream', 'X-CSRF-Token': cookie('csrf_token'), Accept: 'application/json' },
    body: file,
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data?.error || 'error', data?.msg || `Upload failed (${response.status}).`);
}

onSubmit($('#avatar-form'), async (data, form) => {
  const file = $('#avatar-file').files[0];
  if (!file) throw new Error('Choose an image first.');
  if (file.size > MAX_AVATAR_BYTES) throw new Error('The image may be at most 2 MiB.');
  await sendAvatar(file);
  form.reset();
  $('#avatar-preview').hidden = true;
  toast('Avatar updated.', 'success');
  await load();
});

$('#avatar-remove').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  try {
    await fetch('/v1/user/avatar', { method: 'DELETE', credentials: 'same-origin', headers: { 'X-CSRF-Token': cookie('csrf_token') } });
    toast('Back to your initials.', 'success');
    await load();
  } catch (error) {
    toast(error.message, 'error');
  }
}));

onSubmit($('#email-form'), async (data, form) => {
  const sent = await post('/v1/user/email', {
    new_email: String(data.get('new_email') || '').trim(),
    current_password: String(data.get('current_password') || ''),
  }, { on401: 'throw' }); // a wrong password is 401: say so here, do not sign out
  form.reset();
  toast(`We sent a link to ${sent.email}: open it to move your account there.`, 'success');
});

onSubmit($('#password-form'), async (data, form) => {
  const done = await post('/v1/user/password', {
    current_password: String(data.get('current_password') || ''),
    new_password: String(data.get('new_password') || ''),
  }, { on401: 'throw' });
  form.reset();
  toast(`Password changed; ${done.other_sessions_signed_out} other session(s) signed out.`, 'success');
});

onSubmit($('#delete-form'), async (data) => {
  const sure = await confirmDialog('Delete your account for good? Portfolios, keys and webhooks stop now and the wallet balance is forfeited.', 'Delete my account');
  if (!sure) return;
  await post('/v1/user/delete', { password: String(data.get('password') || '') }, { on401: 'throw' });
  leave('/?deleted=1');
});

fillTimeZones();
load().catch((error) => toast(error.message, 'error'));
