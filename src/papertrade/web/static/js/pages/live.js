// Live accounts (docs/live.md): register a sub-account key with its bound source and limits,
// each account's mirrored orders (with attempts and the exchange's answer) and reconciliation
// drift, resume/check/delete, and the kill switch with a confirmation and a per-account report.

import { del, get, patch, post } from '../api.js';
import { fillTable, h, reconcile, td, $ } from '../dom.js';
import { time } from '../format.js';
import { every } from '../live.js';
import { busy, confirmDialog, onSubmit, toast } from '../ui.js';

let labels = {};
let sources = {}; // "portfolio:12" → a readable name

async function loadSources() {
  const [portfolios, strategies] = await Promise.all([get('/v1/portfolios/my'), get('/v1/strategies/my')]);
  const tokens = (await Promise.all(portfolios.map((p) => get(`/v1/portfolios/${p.id}/webhook-tokens`)
    .then((list) => list.filter((t) => !t.revoked_at).map((t) => ({ ...t, portfolio: p }))))))
    .flat();
  const options = [
    ...portfolios.map((p) => [`portfolio:${p.id}`, `Portfolio ${p.name} (${p.code})`]),
    ...strategies.map((s) => [`strategy:${s.id}`, `Strategy ${s.name} (${s.code})`]),
    ...tokens.map((t) => [`token:${t.id}`, `Webhook token ${t.prefix}… of ${t.portfolio.name}`]),
  ];
  sources = Object.fromEntries(options);
  $('#live-source').replaceChildren(h('option', { value: '' }, 'None yet'),
    ...options.map(([value, text]) => h('option', { value }, text)));
}

function sourceBody(value) {
  const [kind, id] = String(value || '').split(':');
  const field = { portfolio: 'source_portfolio_id', strategy: 'source_strategy_id', token: 'source_token_id' }[kind];
  return field ? { [field]: Number(id) } : {};
}

function sourceName(account) {
  if (account.source_portfolio_id) return sources[`portfolio:${account.source_portfolio_id}`] || `Portfolio #${account.source_portfolio_id}`;
  if (account.source_strategy_id) return sources[`strategy:${account.source_strategy_id}`] || `Strategy #${account.source_strategy_id}`;
  if (account.source_token_id) return sources[`token:${account.source_token_id}`] || `Webhook token #${account.source_token_id}`;
  return 'none';
}

function driftText(check) {
  if (!check) return 'not checked yet';
  if (check.status === 'error') return `could not check: ${check.error}`;
  if (check.status === 'ok') return `in line (${time(check.checked_at)})`;
  const parts = (check.drift.positions || []).map((p) => `${p.symbol}: ${p.actual} held, ${p.intended} intended`);
  if ((check.drift.open_orders || []).length) parts.push(`${check.drift.open_orders.length} open order(s) not placed by the mirror`);
  return `drift (${time(check.checked_at)}): ${parts.join('; ')}`;
}

function accountCard(account, orders, latest) {
  const limits = [
    `sizing ${account.sizing} ${account.sizing_value}`,
    account.symbols.length ? `symbols ${account.symbols.join(', ')}` : 'any symbol',
    account.max_position_notional ? `max position ${account.max_position_notional} USDT` : null,
    account.max_daily_loss ? `max daily loss ${account.max_daily_loss} USDT` : null,
  ].filter(Boolean).join(' · ');
  const table = h('table', { class: 'table stack live-orders' },
    h('thead', {}, h('tr', {}, ...['When', 'Symbol', 'Side', 'Qty', 'Status', 'Attempts', 'Answer']
      .map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody'));
  fillTable(table, orders.map((o) => h('tr', { 'data-key': o.id },
    td(time(o.created_at), '', 'When'), td(o.symbol, '', 'Symbol'), td(o.side, '', 'Side'),
    td(o.quantity ?? o.source_quantity, 'num', 'Qty'), td(o.status, '', 'Status'),
    td(String(o.attempts), 'num', 'Attempts'), td((o.answer || '').slice(0, 120), 'live-answer', 'Answer'))));
  const resume = h('button', { type: 'button', class: 'btn btn-small', hidden: account.status === 'active' }, 'Resume');
  const checkNow = h('button', { type: 'button', class: 'btn btn-small' }, 'Check now');
  const remove = h('button', { type: 'button', class: 'btn btn-small btn-danger' }, 'Delete');
  resume.addEventListener('click', () => busy(resume, async () => {
    await patch(`/v1/live/accounts/${account.id}`, { resume: true });
    await load();
  }));
  checkNow.addEventListener('click', () => busy(checkNow, async () => {
    try {
      const result = await post(`/v1/live/accounts/${account.id}/reconcile`);
      toast(result.status === 'ok' ? 'In line with the exchange.' : 'Drift found.', result.status === 'ok' ? 'success' : 'error');
    } catch (error) {
      toast(error.message, 'error');
    }
    await load();
  }));
  remove.addEventListener('click', async () => {
    if (!(await confirmDialog(`Forget ${account.label} and its key? Nothing is done on the exchange.`, 'Delete'))) return;
    await del(`/v1/live/accounts/${account.id}`);
    await load();
  });
  return h('article', { class: 'card live-account', 'data-account': account.id },
    h('div', { class: 'row live-account-head' },
      h('h3', {}, account.label),
      h('span', { class: `badge ${account.status === 'active' ? 'badge-on' : 'badge-off'}`, 'data-role': 'status' }, account.status),
      h('span', { class: 'muted' }, `key ${account.api_key_hint} · withdrawals ${account.withdrawals}`)),
    account.kill_reason ? h('p', { class: 'muted', 'data-role': 'kill-reason' }, `Stopped: ${account.kill_reason}`) : '',
    h('p', {}, `Source: ${sourceName(account)}`),
    h('p', { class: 'muted' }, limits),
    h('p', { 'data-role': 'drift' }, `Reconciliation: ${driftText(latest)}`),
    h('div', { class: 'table-wrap' }, table),
    h('div', { class: 'row-actions' }, resume, checkNow, remove));
}

async function load() {
  const accounts = await get('/v1/live/accounts');
  labels = Object.fromEntries(accounts.map((a) => [a.id, a.label]));
  const cards = await Promise.all(accounts.map(async (account) => {
    const [orders, checks] = await Promise.all([
      get(`/v1/live/accounts/${account.id}/orders?limit=20`),
      get(`/v1/live/accounts/${account.id}/reconciliations?limit=1`),
    ]);
    return accountCard(account, orders, checks[0]);
  }));
  reconcile($('#live-accounts'), cards); // in place: a button being clicked stays put
  $('#live-empty').hidden = accounts.length > 0;
}

onSubmit($('#live-form'), async (data, form) => {
  const optional = (name) => (String(data.get(name) || '').trim() || undefined);
  await post('/v1/live/accounts', {
    label: String(data.get('label') || '').trim(),
    api_key: String(data.get('api_key') || '').trim(),
    api_secret: String(data.get('api_secret') || ''),
    sizing: data.get('sizing'),
    sizing_value: String(data.get('sizing_value') || '1').trim(),
    symbols: String(data.get('symbols') || '').split(',').map((s) => s.trim()).filter(Boolean),
    max_position_notional: optional('max_position_notional'),
    max_daily_loss: optional('max_daily_loss'),
    ...sourceBody(data.get('source')),
  });
  form.reset();
  toast('Key checked and registered.', 'success');
  await load();
});

$('#kill-button').addEventListener('click', async () => {
  const close = $('#kill-close').checked;
  const question = close
    ? 'Stop every live account, cancel every open order AND close every position at market?'
    : 'Stop every live account and cancel every open order?';
  if (!(await confirmDialog(question, 'Kill switch'))) return;
  await busy($('#kill-button'), async () => {
    try {
      const reports = await post('/v1/live/kill', { close_positions: close });
      $('#kill-result').hidden = false;
      fillTable($('#kill-report'), reports.map((r) => h('tr', { 'data-key': r.account_id },
        td(labels[r.account_id] || `#${r.account_id}`, '', 'Account'),
        td(r.cancelled_symbols.join(', ') || 'none', '', 'Orders cancelled'),
        td(r.closed_symbols.join(', ') || (close ? 'none' : 'not asked'), '', 'Positions closed'),
        td(r.error || '—', '', 'Error'))));
      toast(reports.some((r) => r.error) ? 'Kill switch fired; some exchanges failed.' : 'Kill switch fired.',
        reports.some((r) => r.error) ? 'error' : 'success');
    } catch (error) {
      toast(error.message, 'error');
    }
    await load();
  });
});

await loadSources();
every(5000, load);
