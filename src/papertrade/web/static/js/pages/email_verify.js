// The page a verification (or change-of-address) mail links to: the token is posted only when
// the user presses the button, so a mail scanner that opens the link uses nothing up.
// POST /v1/auth/email/verify.

import { post } from '../api.js';

const card = document.getElementById('verify-card');
const button = document.getElementById('verify-button');

if (button) {
  button.addEventListener('click', async () => {
    button.disabled = true;
    document.getElementById('verify-error').textContent = '';
    try {
      const state = await post('/v1/auth/email/verify', { token: card.dataset.token }, { on401: 'throw' });
      document.getElementById('verify-message').textContent = `${state.email} is confirmed as your address.`;
      document.getElementById('verify-done').hidden = false;
      button.hidden = true;
      document.getElementById('verify-intro').hidden = true;
    } catch (error) {
      const plain = {
        invalid_token: 'This link is invalid, already used or expired. Ask for a new one in your settings.',
        email_taken: 'Another account already uses this address, so it cannot be moved to yours.',
      };
      document.getElementById('verify-error').textContent = plain[error.code] || error.message;
      button.disabled = false;
    }
  });
}
