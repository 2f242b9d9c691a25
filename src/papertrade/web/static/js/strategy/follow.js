// Follow a strategy's signals from its public page: POST /v1/subscribe {strategy_id} (free:
// its signal history is public anyway), and unfollow by cancelling that subscription. The
// signals arrive in the inbox (and the channels chosen on the Copying page).

import { get, post } from '../api.js';
import { $ } from '../dom.js';
import { busy, toast } from '../ui.js';

export async function followButton(strategy) {
  const button = $('#ps-follow');
  const state = $('#ps-follow-state');
  let mine = null;
  const show = () => {
    const following = mine !== null && mine.status === 'active';
    button.textContent = following ? 'Unfollow signals' : 'Follow signals';
    button.setAttribute('aria-pressed', String(following));
    state.textContent = following ? 'You get its signals in your inbox.' : '';
    button.hidden = false;
  };
  const mineNow = async () => {
    const all = await get('/v1/subscriptions/my');
    mine = all.find((s) => s.strategy_id === strategy.id && s.status === 'active') ?? null;
  };
  await mineNow();
  show();
  button.addEventListener('click', () => busy(button, async () => {
    try {
      if (mine !== null) {
        await post(`/v1/subscriptions/${mine.id}/cancel`);
        toast('You no longer follow its signals.', 'success');
      } else {
        await post('/v1/subscribe', { strategy_id: strategy.id, channels: ['inbox'] });
        toast('You follow its signals: they arrive in your inbox.', 'success');
      }
      await mineNow();
      show();
    } catch (error) {
      toast(error.message, 'error');
    }
  }));
}
