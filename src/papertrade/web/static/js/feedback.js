// The "Feedback" button of every signed-in page: a dialog that sends POST /v1/feedback with the
// page the user is on and the app version, then the optional screenshot (docs/feedback.md).

import { ApiError, cookie, post } from './api.js';
import { $ } from './dom.js';
import { busy, formError, toast } from './ui.js';

const MAX_SCREENSHOT_BYTES = 2 * 1024 * 1024;
const MAX_PAGE_CHARS = 300; // the API's limit on `page`

async function sendScreenshot(feedbackId, file) {
  const response = await fetch(`/v1/feedback/${feedbackId}/screenshot`, {
    method: 'PUT',
    credentials: 'same-origin',
    headers: { 'Content-Type': file.type || 'application/octet-stream', 'X-CSRF-Token': cookie('csrf_token'), Accept: 'application/json' },
    body: file,
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data?.error || 'error', data?.msg || `Upload failed (${response.status}).`);
}

const kib = (bytes) => `${Math.ceil(bytes / 1024).toLocaleString('en-US')} KiB`;

// A screenshot the service would refuse (its body limit is 2 MiB: 413), said before sending.
function tooLarge(file) {
  if (!file || file.size <= MAX_SCREENSHOT_BYTES) return null;
  return Object.assign(new Error(`The screenshot may be at most 2 MiB (${kib(MAX_SCREENSHOT_BYTES)}); this one is ${kib(file.size)}. Choose a smaller one, or send without it.`), { field: 'screenshot' });
}

// Refusals the form can see before anything is sent, in words, with the field to mark.
function problem(text, file) {
  if (!text.trim()) return Object.assign(new Error('Write a message before sending.'), { field: 'text' });
  return tooLarge(file);
}

const clock = (ms) => new Date(ms).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
const wait = (s) => (s < 60 ? `${s} s` : `${Math.ceil(s / 60)} min`);

// The hourly limit (429 with Retry-After, docs/feedback.md): when sending works again, in words
// and on the clock; the message stays in the form for then.
function refusal(error) {
  if (error.status !== 429 || !error.retryAfter) return error;
  const s = error.retryAfter;
  return new Error(`You have sent as many messages as an hour allows. You can send again in ${wait(s)} (at ${clock(Date.now() + s * 1000)}); your message stays here until then.`);
}

export function feedbackButton() {
  const opener = $('#feedback-open');
  const dialog = $('#feedback-dialog');
  if (!opener || !dialog) return;
  const form = $('#feedback-form', dialog);
  const close = () => {
    dialog.close();
    opener.focus();
  };
  opener.addEventListener('click', () => {
    formError(form, null);
    dialog.showModal();
    form.elements.text.focus();
  });
  $('#feedback-cancel', dialog).addEventListener('click', close);
  // Said as soon as the file is chosen, not only when Send is pressed.
  form.elements.screenshot.addEventListener('change', () => {
    formError(form, tooLarge(form.elements.screenshot.files[0]));
  });
  dialog.addEventListener('cancel', (event) => { // Escape
    event.preventDefault();
    close();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = form.elements.text.value;
    const file = form.elements.screenshot.files[0];
    formError(form, null);
    const refused = problem(text, file);
    if (refused) {
      formError(form, refused);
      return;
    }
    await busy($('button[type="submit"]', form), async () => {
      let sent;
      try {
        sent = await post('/v1/feedback', {
          category: form.elements.category.value,
          text,
          page: location.pathname.slice(0, MAX_PAGE_CHARS),
          app_version: form.dataset.appVersion,
        });
      } catch (error) {
        formError(form, refusal(error));
        return;
      }
      // The message is in: whatever becomes of the screenshot, sending again would repeat it.
      let said = 'Thank you, your feedback was sent. Our answer will arrive in your Inbox.';
      let kind = 'success';
      try {
        if (file) await sendScreenshot(sent.id, file);
      } catch (error) {
        said = `Your feedback was sent, but the screenshot was not attached: ${error.message}`;
        kind = 'error';
      }
      form.reset();
      close();
      toast(said, kind);
    });
  });
}
