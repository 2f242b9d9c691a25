// Asking for a password-reset mail: POST /v1/auth/password/forgot (the answer is the same
// whether or not the address has an account).

import { post } from '../api.js';
import { formError, ready } from '../ui.js';

const form = document.getElementById('forgot-form');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  formError(form, null);
  const email = form.elements.email;
  if (!email.value.trim() || !email.validity.valid) {
    formError(form, new Error('Enter a valid email address.'));
    email.setAttribute('aria-invalid', 'true');
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    await post('/v1/auth/password/forgot', { email: email.value.trim() }, { on401: 'throw' });
    form.hidden = true;
    document.getElementById('forgot-done').hidden = false;
  } catch (error) {
    formError(form, error);
    button.disabled = false;
  }
});
ready(form);
