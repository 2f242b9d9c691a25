// A public portfolio by short code: GET /v1/portfolios/{code}/public (no sign-in needed).

import { get, post } from '../api.js';
import { $ } from '../dom.js';
import { percent, pnlClass, signedUsd, usd } from '../format.js';
import { every } from '../live.js';

const code = $('#public').dataset.code;
const portfolioId = Number(code.slice(1)); // P0000012 → 12

async function loadCopy() {
  try {
    const leader = await get(`/v1/copy/leaders/${portfolioId}`, { on401: 'throw' });
    $('#copy-followers').textContent = String(leader.followers);
    $('#copy-pnl').textContent = `${signedUsd(leader.followers_pnl)} USDT`;
    $('#copy-aum').textContent = `${usd(leader.aum)} USDT`;
    $('#copy-share').textContent = `${leader.profit_share_pct} %`;
    $('#copy-link').href = `/app/social?leader=${portfolioId}`;
    $('#copy-card').hidden = false;
  } catch {
    $('#copy-card').hidden = true;
  }
}

$('#subscribe-free').addEventListener('click', async () => {
  try {
    await post('/v1/subscribe', { portfolio_id: portfolioId });
    $('#subscribe-note').textContent = 'Subscribed: its closed trades reach your inbox.';
  } catch (error) {
    $('#subscribe-note').textContent = error.message;
  }
});

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

every(10000, load);
every(10000, loadCopy);
