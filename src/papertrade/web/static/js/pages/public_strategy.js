// A strategy by code (/s/S0000001): name, description, the latest source (read-only, with
// highlighting) and its signal history. Data: GET /v1/strategies/by_code/{code} and
// GET /v1/strategies/{id}/signals — public strategies for anyone, a private one for its owner.
// Signed in, its comment thread (GET /v1/comments?strategy_id=…, social/comments.js).

import { get } from '../api.js';
import { $ } from '../dom.js';
import { commentThread } from '../social/comments.js';
import { createEditor } from '../strategy/editor.js';
import { followButton } from '../strategy/follow.js';
import { signalHistory } from '../strategy/signals.js';

const root = $('#public-strategy');

async function load() {
  let strategy;
  try {
    strategy = await get(`/v1/strategies/by_code/${encodeURIComponent(root.dataset.code)}`, { on401: 'ignore' });
  } catch (error) {
    if (error.status === 404 || error.status === 401) {
      $('#ps-missing').hidden = false;
      return;
    }
    throw error;
  }
  $('#ps-title').textContent = strategy.name;
  document.title = `${strategy.name} · Papertrade`;
  $('#ps-kind').textContent = strategy.kind === 'python' ? 'Python' : 'DSL';
  $('#ps-version').textContent = `version ${strategy.latest_version}`;
  $('#ps-source-version').textContent = `(version ${strategy.latest_version})`;
  $('#ps-description').textContent = strategy.description;
  if (document.body.dataset.signedIn) {
    const edit = $('#ps-edit');
    edit.href = `/app/strategies/${strategy.id}`;
    // Only the owner can open the editor; the service says so when asked for the backtests.
    get(`/v1/strategies/${strategy.id}/deployments`, { on401: 'ignore' }).then(() => { edit.hidden = false; }, () => {});
    followButton(strategy);
  } else {
    // Signed out: a way to sign in that says why and comes back here (?next=, ?reason=).
    $('#ps-follow-sign-in').hidden = false;
  }
  $('#ps-body').hidden = false;
  createEditor($('#ps-source'), {
    doc: strategy.source,
    language: strategy.kind,
    readOnly: true,
    label: `Source of ${strategy.name}`,
  });
  if (document.body.dataset.signedIn) commentThread({ strategy_id: strategy.id });
  const history = signalHistory(strategy.id, $('#ps-signals'), $('#ps-more'), { withVersion: false });
  await history.refresh();
}

load();
