// Sign in / sign up: POST /v1/auth/login|signup, then go where the user was heading.

import { post } from '../api.js';
import { formError, ready } from '../ui.js';

const form = document.getElementById('auth-form');
const mode = form.dataset.mode;
const destination = form.dataset.next || '/app';

function check() {
  const email = form.elements.email;
  const password = form.elements.password;
  if (!email.value.trim() || !email.validity.valid) {
    return { field: email, message: 'Enter a valid email address.' };
  }
  // Signing in judges no shape: a wrong password of any length is just wrong (the server's 401).
  if (mode === 'signup' && password.value.length < 8) {
    return { field: password, message: 'The password needs at least 8 characters.' };
  }
  if (!password.value) return { field: password, message: 'Enter your password.' };
  return null;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  formError(form, null);
  const problem = check();
  if (problem) {
    formError(form, new Error(problem.message));
    problem.field.setAttribute('aria-invalid', 'true');
    problem.field.focus();
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    const body = { email: form.elements.email.value.trim(), password: form.elements.password.value };
    const invite = form.elements.invite_code;
    if (mode === 'signup' && invite && invite.value.trim()) body.invite_code = invite.value.trim();
    await post(`/v1/auth/${mode === 'login' ? 'login' : 'signup'}`, body, { on401: 'throw' });
    location.assign(destination);
  } catch (error) {
    const messages = {
      invalid_credentials: 'Wrong email or password.',
      email_taken: 'An account with this email already exists. Sign in instead?',
      invite_required: 'Sign-up needs a valid invitation code right now.',
    };
    formError(form, new Error(messages[error.code] || error.message));
    (error.code === 'email_taken' ? form.elements.email : form.elements.password).focus();
    button.disabled = false;
  }
});
ready(form);
