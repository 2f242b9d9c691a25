// A public portfolio by short code: GET /v1/portfolios/{code}/public (no sign-in needed).

import { get, post } from '../api.js';
import { equityChart } from '../charts.js';
import { fillTable, h, td, $ } from '../dom.js';
import { percent, pnlClass, signedUsd, time, usd } from '../format.js';
import { loadInstruments, price, qty } from '../instruments.js';
import { every } from '../live.js';
import { commentThread } from '../social/comments.js';
import { busy, confirmDialog } from '../ui.js';

const code = $('#public').dataset.code;
const portfolioId = Number(code.slice(1)); // P0000012 → 12

function roi(id, value) {
  const el = $(id);
  el.textContent = value === null ? '—' : percent(value);
  el.className = value === null ? '' : `num ${pnlClass(value)}`;
}

async function loadCopy() {
  try {
    const leader = await get(`/v1/copy/leaders/${portfolioId}`, { on401: 'throw' });
    $('#copy-followers').textContent = String(leader.followers);
    $('#copy-pnl').textContent = `${signedUsd(leader.followers_pnl)} USDT`;
    $('#copy-aum').textContent = `${usd(leader.aum)} USDT`;
    $('#copy-share').textContent = `${leader.profit_share_pct} %`;
    roi('#copy-roi-7', leader.roi_7d_pct);
    roi('#copy-roi-30', leader.roi_30d_pct);
    roi('#copy-roi-90', leader.roi_90d_pct);
    $('#copy-roi-note').hidden = leader.roi_90d_pct !== null;
    $('#copy-drawdown').textContent = percent(-Math.abs(leader.max_drawdown_pct));
    $('#copy-winrate').textContent = leader.win_rate === null ? '—' : `${(Number(leader.win_rate) * 100).toFixed(0)}%`;
    const copyPath = `/app/social?leader=${portfolioId}`;
    $('#copy-link').href = document.body.dataset.signedIn
      ? copyPath
      : `/login?next=${encodeURIComponent(copyPath)}&reason=copy-portfolio`;
    $('#copy-card').hidden = false;
  } catch {
    $('#copy-card').hidden = true;
  }
}

// Following its trades (docs/subscriptions.md): how many follow it, free or paid (the owner's
// price for 30 days, paid from my wallet), my subscription's state, cancel and resubscribe.
// The counts and the price are public; the rest needs sign-in.
let follow = { price: 0, balance: null, mine: null };

function showFollow() {
  const { price, balance, mine } = follow;
  const paid = Number(price) > 0;
  const live = mine && mine.status !== 'cancelled';
  const again = mine && (mine.status === 'cancelled' || mine.cancel_at_period_end);
  $('#follow-terms').textContent = paid
    ? `Paid: ${usd(price)} USDT per 30 days from your wallet${balance === null ? '' : ` (it holds ${usd(balance)} USDT)`}, renewed until you cancel — every trade as it happens (opens, closes, take-profit / stop-loss changes and hits) on the channels you choose. Free: its closed trades only, in your inbox.`
    : 'Free: its closed trades reach your inbox. The owner offers no paid tier.';
  let state = '';
  if (mine && mine.status === 'past_due') {
    state = `Past due: your wallet could not pay the renewal (${usd(mine.price)} USDT). Recharge your wallet; the next renewal run charges it and the signals resume.`;
  } else if (mine && mine.cancel_at_period_end) {
    state = `Cancelled: you keep access until ${time(mine.current_period_end)}; nothing more is charged.`;
  } else if (live) {
    state = mine.tier === 'paid'
      ? `You follow it (paid), renewed on ${time(mine.current_period_end)}.`
      : `You follow it (${mine.tier}).`;
  } else if (mine) {
    state = 'Your subscription ended.';
  }
  $('#my-subscription').textContent = state;
  // Following and not cancelling: only Cancel. Cancelling a paid period: take it back (no
  // charge). None or ended: subscribe free, or paid when the owner set a price.
  const cancelling = Boolean(mine?.cancel_at_period_end);
  const following = Boolean(live && !cancelling);
  const free = $('#subscribe-free');
  free.hidden = following || cancelling;
  free.textContent = again ? 'Resubscribe (free)' : 'Subscribe (free)';
  const paidButton = $('#subscribe-paid');
  paidButton.hidden = following || (!cancelling && !paid);
  paidButton.textContent = cancelling
    ? 'Resubscribe (nothing to pay until the period ends)'
    : `${again ? 'Resubscribe' : 'Subscribe'} (paid, ${usd(price)} USDT / 30 days)`;
  $('#subscription-cancel').hidden = !following;
  $('#follow-card').hidden = false;
}

function showCounts(counts) {
  $('#follow-subscribers').textContent = String(counts.active);
  $('#follow-paid').textContent = String(counts.paid);
  $('#follow-free').textContent = String(counts.free);
}

function showSignedOut() {
  for (const id of ['#subscribe-free', '#subscribe-paid', '#subscription-cancel']) $(id).hidden = true;
  $('#follow-sign-in').hidden = false;
}

async function loadFollow() {
  const signedIn = Boolean(document.body.dataset.signedIn);
  try {
    const [counts, subs, wallet] = await Promise.all([
      get(`/v1/portfolios/${portfolioId}/subscriber-counts`, { on401: 'throw' }),
      signedIn ? get('/v1/subscriptions/my', { on401: 'throw' }) : [],
      signedIn ? get('/v1/user/wallet', { on401: 'throw' }).catch(() => null) : null,
    ]);
    showCounts(counts);
    follow = {
      price: counts.price,
      balance: wallet ? wallet.balance : null,
      mine: subs.find((s) => s.portfolio_id === portfolioId) || null,
    };
    showFollow();
    if (!signedIn) showSignedOut();
  } catch {
    $('#follow-card').hidden = true;
  }
}

function explainSubscribe(error) {
  if (error.code === 'insufficient_funds') {
    const held = follow.balance === null ? '' : `holds ${usd(follow.balance)} USDT, `;
    return h('span', {}, `Not subscribed: your wallet ${held}less than the ${usd(follow.price)} USDT of 30 days, and nothing was charged. Recharge it on the `,
      h('a', { href: '/app/wallet' }, 'Wallet page'), ' (USDT-TRC20), then subscribe again.');
  }
  if (error.code === 'subscription_exists') return 'You follow it already: cancel first to change the tier.';
  return error.message;
}

async function subscribe(tier) {
  const note = $('#subscribe-note');
  try {
    await post('/v1/subscribe', { portfolio_id: portfolioId, tier });
    note.textContent = tier === 'paid'
      ? 'Subscribed (paid): every trade reaches your inbox as it happens.'
      : 'Subscribed: its closed trades reach your inbox.';
  } catch (error) {
    note.replaceChildren(explainSubscribe(error));
  }
  await loadFollow();
}

$('#subscribe-free').addEventListener('click', (event) => busy(event.currentTarget, () => subscribe('free')));
$('#subscribe-paid').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  const resuming = follow.mine?.cancel_at_period_end;
  const tier = resuming ? follow.mine.tier : 'paid';
  if (!resuming && !(await confirmDialog(`Pay ${usd(follow.price)} USDT from your wallet now for 30 days? It renews every 30 days until you cancel.`, 'Pay and subscribe', false))) return;
  await subscribe(tier === 'owner' ? 'free' : tier);
}));
$('#subscription-cancel').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  const mine = follow.mine;
  if (!mine) return;
  try {
    await post(`/v1/subscriptions/${mine.id}/cancel`);
    $('#subscribe-note').textContent = mine.tier === 'paid'
      ? 'Cancelled: you keep access to the end of the period paid for.'
      : 'Cancelled.';
  } catch (error) {
    $('#subscribe-note').textContent = error.message;
  }
  await loadFollow();
}));

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
// root covers the portfolio's chain, with a link to its track-record page (/p/<code>/track-record).
async function attestation() {
  try {
    const a = await get(`/v1/chain/portfolios/${encodeURIComponent(code)}`, { on401: 'throw' });
    const badge = $('#pub-attest-badge');
    if (a.verified_through) {
      badge.textContent = a.status === 'verified'
        ? `✓ Track record verified through ${a.verified_through}`
        : `✓ Verified through ${a.verified_through} · newer trades wait for the next anchored root`;
      badge.className = 'badge badge-on';
    } else {
      badge.textContent = a.head_seq ? 'Track record chained · first anchored root pending' : 'No trades yet';
      badge.className = 'badge badge-off';
    }
    $('#pub-attest').hidden = false;
  } catch {
    $('#pub-attest').hidden = true;
  }
}

// The open book: the equity curve and the open positions the square promises.
let curveChart = null;
async function loadBook() {
  const [points, positions] = await Promise.all([
    get(`/v1/portfolios/${encodeURIComponent(code)}/public/equity-curve`, { on401: 'throw' }),
    get(`/v1/portfolios/${encodeURIComponent(code)}/public/positions`, { on401: 'throw' }),
  ]);
  $('#pub-book').hidden = false;
  curveChart ??= equityChart($('#pub-curve'));
  curveChart.setPoints(points);
  fillTable($('#pub-positions'), positions.map((p) => h('tr', { 'data-key': p.symbol, 'data-symbol': p.symbol },
    td(h('a', { href: `/markets/${p.symbol}` }, p.symbol), '', 'Symbol'),
    td(h('span', { class: `side ${p.side}` }, `${p.side} ${p.leverage}×`), '', 'Side'),
    td(qty(p.symbol, p.quantity), 'num', 'Size'),
    td(price(p.symbol, p.entry_price), 'num', 'Entry'),
    td(price(p.symbol, p.mark_price), 'num', 'Mark'),
    td(signedUsd(p.unrealized_pnl), `num ${pnlClass(p.unrealized_pnl)}`, 'Unrealized PnL'),
    td(percent(p.roe_pct), `num ${pnlClass(p.roe_pct)}`, 'ROE'))));
}

// Each part refreshes on its own period; the page shows once every part's first load has
// settled (or after REVEAL_AT_MOST_MS), so cards appearing one after another do not push a
// button down under the pointer as it is clicked.
const REVEAL_AT_MOST_MS = 3000;
const firstLoad = (ms, fn) => new Promise((resolve) => { every(ms, fn, () => resolve()); });
const firstLoads = Promise.all([
  firstLoad(10000, load),
  loadInstruments().catch(() => {}).then(() => firstLoad(15000, () => loadBook().catch(() => { $('#pub-book').hidden = true; }))),
  firstLoad(60000, attestation),
  firstLoad(10000, loadCopy),
  firstLoad(15000, loadFollow),
]);
Promise.race([firstLoads, new Promise((resolve) => { setTimeout(resolve, REVEAL_AT_MOST_MS); })])
  .then(() => $('#public').removeAttribute('aria-busy'));

commentThread({ portfolio_id: portfolioId });
