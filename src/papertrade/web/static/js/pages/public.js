// A public portfolio by short code: GET /v1/portfolios/{code}/public (no sign-in needed).

import { get } from '../api.js';
import { $ } from '../dom.js';
import { percent, pnlClass, usd } from '../format.js';
import { every } from '../live.js';

const code = $('#public').dataset.code;

async function load() {
  try {
    const p = await get(`/v1/portfolios/${encodeURIComponent(code)}/public`, { on401: 'throw' });
    $('#pub-name').textContent = p.name;
    $('#pub-name').title = p.name;
    document.title = `${p.name} · Papertrade`;
    $('#pub-since').textContent = `· since ${new Date(p.created_at).toLocaleDateString('en-CA')}`;
    $('#pub-equity').textContent = `${usd(p.equity)} USDT`;
    $('#pub-return').textContent = percent(p.return_pct);
    $('#pub-return').className = `num ${pnlClass(p.return_pct)}`;
    $('#pub-drawdown').textContent = percent(-Math.abs(p.max_drawdown_pct));
    $('#pub-trades').textContent = String(p.trades);
    $('#pub-winrate').textContent = p.win_rate === null ? '—' : `${(Number(p.win_rate) * 100).toFixed(0)}%`;
    $('#pub-initial').textContent = `${usd(p.initial_balance)} USDT`;
    $('#pub-description').textContent = p.description;
    $('#pub-card').hidden = false;
    $('#pub-error').textContent = '';
  } catch (error) {
    $('#pub-card').hidden = true;
    $('#pub-error').textContent = error.status === 404
      ? 'This portfolio does not exist or is not public.'
      : error.message;
  }
}

// The attested track record (docs/attestation.md): "verified through <day>" once an anchored
// daily root covers the portfolio's chain, with links to the chain and the day's signed root.
async function attestation() {
  try {
    const a = await get(`/v1/chain/portfolios/${encodeURIComponent(code)}`, { on401: 'throw' });
    const badge = $('#pub-attest-badge');
    if (a.verified_through) {
      badge.textContent = a.status === 'verified'
        ? `✓ Track record verified through ${a.verified_through}`
        : `✓ Verified through ${a.verified_through} · newer trades wait for their day's root`;
      badge.className = 'badge badge-on';
      $('#pub-attest-root').href = `/v1/chain/roots/${a.verified_through}`;
    } else {
      badge.textContent = a.head_seq ? 'Track record chained · first daily root pending' : 'No trades yet';
      badge.className = 'badge badge-off';
    }
    $('#pub-attest').hidden = false;
  } catch {
    $('#pub-attest').hidden = true;
  }
}

every(10000, load);
every(60000, attestation);
