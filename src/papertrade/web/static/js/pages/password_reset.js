// Choosing a new password from the reset mail's link: POST /v1/auth/password/reset.

import { post } from '../api.js';
import { formError, ready } from '../ui.js';

const form = document.getElementById('reset-form');

function problem() {
  const { password, repeat } = form.elements;
  if (password.value.length < 8) return { field: password, message: 'The password needs at least 8 characters.' };
  if (password.value.length > 256) return { field: password, message: 'The password can have at most 256 characters.' };
  if (repeat.value !== password.value) return { field: repeat, message: 'The two passwords differ.' };
  return null;
}

if (form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    formError(form, null);
    const found = problem();
    if (found) {
      formError(form, new Error(found.message));
      found.field.setAttribute('aria-invalid', 'true');
      found.field.focus();
      return;
    }
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      await post('/v1/auth/password/reset', { token: form.dataset.token, password: form.elements.password.value }, { on401: 'throw' });
      form.hidden = true;
      document.getElementById('reset-done').hidden = false;
    } catch (error) {
      const plain = {
        invalid_token: 'This link is invalid, already used or expired (links work for 30 minutes, once). Ask for a new one.',
      };
      // A weak password comes back as "password: <why>"; show just the why.
      const message = plain[error.code] || String(error.message).replace(/^body\.password: |^password: /, '');
      formError(form, new Error(message));
      form.elements.password.setAttribute('aria-invalid', 'true');
      button.disabled = false;
    }
  });
  ready(form);
}
