// A public portfolio by short code: GET /v1/portfolios/{code}/public (no sign-in needed).

import { get, post } from '../api.js';
import { h, $ } from '../dom.js';
import { percent, pnlClass, signedUsd, usd } from '../format.js';
import { every } from '../live.js';
import { onSubmit } from '../ui.js';

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
every(10000, loadCopy);

// Comments: text is set as text (never HTML), as it was written. docs/comments.md.
let replyTo = null;

function answer(comment) {
  replyTo = comment.id;
  $('#comment-label').textContent = `Reply to comment #${comment.id}`;
  $('#comment-unreply').hidden = false;
  $('#comment-text').focus();
}

function item(comment, top) {
  const text = comment.deleted ? h('em', { class: 'muted' }, 'deleted') : h('p', { class: 'pre-wrap' }, comment.text);
  const when = new Date(comment.created_at).toISOString().slice(0, 16).replace('T', ' ');
  return h('li', { class: 'comment', 'data-id': comment.id },
    h('p', { class: 'muted' }, `#${comment.id} · user ${comment.user_id} · ${when}${comment.edited_at ? ' · edited' : ''}`),
    text,
    top && !comment.deleted ? h('button', { type: 'button', class: 'btn btn-small', onclick: () => answer(comment) }, 'Reply') : null,
    comment.replies.length ? h('ol', { class: 'replies' }, comment.replies.map((r) => item(r, false))) : null);
}

async function loadComments() {
  try {
    const comments = await get(`/v1/comments?portfolio_id=${portfolioId}`, { on401: 'throw' });
    $('#comment-list').replaceChildren(...comments.map((c) => item(c, true)));
    $('#comments-card').hidden = false;
  } catch {
    $('#comments-card').hidden = true; // signed out, or not public
  }
}

$('#comment-unreply').addEventListener('click', () => {
  replyTo = null;
  $('#comment-label').textContent = 'Your comment';
  $('#comment-unreply').hidden = true;
});

onSubmit($('#comment-form'), async (data, form) => {
  const body = { portfolio_id: portfolioId, text: String(data.get('text') || '') };
  if (replyTo !== null) body.parent_id = replyTo;
  await post('/v1/comments', body);
  form.reset();
  $('#comment-unreply').click();
  await loadComments();
});

loadComments();
