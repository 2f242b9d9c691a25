// The Backtest tab: the form, the progress bar, the result (metrics, equity and drawdown,
// price with trade markers, trades) and the kept results. Data: POST/GET
// /v1/strategies/{id}/backtests[/{backtest_id}], GET /v1/market/klines for the price chart.

import { get, post } from '../api.js';
import { $, fillTable, h, td } from '../dom.js';
import { dateTime, num, percent, usd } from '../format.js';
import { clearCharts, curveChart, periodChart } from './charts.js';
import { plainError } from './errors.js';
import { watchBacktest } from './progress.js';
import { formError, onSubmit, toast } from '../ui.js';

const MAX_TRADE_ROWS = 1000;
const DAY = 86400e3;

/** A duration in ms as "3 d 4 h", "2 h 5 min", "45 min". */
export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return '—';
  const m = Math.round(Number(ms) / 60000);
  if (m < 60) return `${m} min`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return `${hours} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.floor(hours / 24)} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

const ratio = (v) => (v === null || v === undefined ? '—' : num(v, 2));
const plainPct = (v) => (v === null || v === undefined ? '—' : `${num(v, 2)}%`);

// The B5 metric keys in reading order, with how each is shown.
const METRICS = [
  ['total_return_pct', 'Total return', percent],
  ['annual_return_pct', 'Annual return', percent],
  ['buy_hold_return_pct', 'Buy and hold return', percent],
  ['max_drawdown_pct', 'Maximum drawdown', plainPct],
  ['max_drawdown_duration', 'Longest drawdown', duration],
  ['sharpe', 'Sharpe ratio', ratio],
  ['sortino', 'Sortino ratio', ratio],
  ['calmar', 'Calmar ratio', ratio],
  ['num_trades', 'Trades', (v) => num(v, 0)],
  ['win_rate_pct', 'Win rate', plainPct],
  ['profit_factor', 'Profit factor', ratio],
  ['avg_trade_pct', 'Average trade', percent],
  ['best_trade_pct', 'Best trade', percent],
  ['worst_trade_pct', 'Worst trade', percent],
  ['avg_holding_time', 'Average holding time', duration],
  ['exposure_pct', 'Time in the market', plainPct],
  ['expectancy', 'Expectancy (USDT per trade)', usd],
  ['final_equity', 'Final equity (USDT)', usd],
  ['fees_paid', 'Fees paid (USDT)', usd],
  ['funding_paid', 'Funding paid (USDT)', usd],
];

const toInput = (ms) => new Date(ms).toISOString().slice(0, 16);
const fromInput = (value) => Date.parse(`${value}:00Z`);

/** "0.05" (percent) → "0.0005" (rate), exactly: the decimal point moves two places. */
export function pctToRate(text) {
  const value = String(text).trim();
  if (!/^\d+(\.\d+)?$/.test(value)) throw new Error('Fees are percentages such as 0.05.');
  const [whole, frac = ''] = value.split('.');
  const digits = (whole.padStart(3, '0') + frac).replace(/^0+(?=\d)/, '');
  const scale = frac.length + 2;
  const padded = digits.padStart(scale + 1, '0');
  const rate = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
  return rate.replace(/0+$/, '').replace(/\.$/, '') || '0';
}

const STATUS_TEXT = { queued: 'Queued', running: 'Running', done: 'Done', failed: 'Failed' };

export function backtestPanel(strategyId, versionsOf) {
  const base = `/v1/strategies/${strategyId}/backtests`;
  const form = $('#bt-form');
  const bar = $('#bt-bar');
  const barText = $('#bt-progress-text');
  let kept = [];
  let watching = null;

  const end = Math.floor(Date.now() / 3600e3) * 3600e3;
  form.elements.start.value = toInput(end - 30 * DAY);
  form.elements.end.value = toInput(end);

  const showProgress = (run) => {
    $('#bt-progress').hidden = false;
    const percentDone = Math.round(Number(run.progress || 0) * 100);
    bar.value = run.status === 'done' ? 100 : percentDone;
    bar.textContent = `${bar.value}%`;
    const text = run.status === 'failed'
      ? 'The backtest failed.'
      : `${STATUS_TEXT[run.status] || run.status || 'Running'} · ${bar.value}%${run.progress_text ? ` · ${run.progress_text}` : ''}`;
    barText.textContent = text;
  };

  const follow = async (run) => {
    watching = run.id;
    showProgress(run);
    try {
      const final = await watchBacktest(strategyId, run.id, (update) => {
        if (watching === run.id) showProgress({ ...run, ...update });
      });
      await loadList();
      if (watching === run.id) await showResult(final);
    } catch (error) {
      toast(plainError(error), 'error');
    }
  };

  // The price chart reads its candles a page at a time (GET /v1/market/klines) as it is browsed.
  const klinesOf = (symbol) => ({ interval, start, end, limit }) => get(`/v1/market/klines?${new URLSearchParams({
    symbol, interval, start: String(start), end: String(end), limit: String(limit),
  })}`);
  let price = null;

  /** The price chart over the whole period, its interval buttons and what it shows. */
  async function showPrice(run, fills) {
    const el = $('#bt-price');
    const said = $('#bt-price-view');
    const buttons = $('#bt-price-intervals');
    const described = `${num(fills.length, 0)} fills marked: ▲ buy, ▼ sell. Drag or zoom to browse the whole period; a trade's entry time shows it here.`;
    $('#bt-price-desc').textContent = described;
    price = periodChart(el, {
      timeframe: run.timeframe,
      startMs: run.start_ms,
      endMs: run.end_ms,
      fills,
      read: klinesOf(run.symbol),
      onView: ({ interval, from, to, loading }) => {
        said.textContent = `Showing ${dateTime(from)} → ${dateTime(to)} · ${interval} candles${loading ? ' · reading more…' : ''}`;
        for (const b of buttons.querySelectorAll('[data-interval]')) b.setAttribute('aria-pressed', String(b.dataset.interval === interval));
      },
    });
    const chart = price;
    const act = (work) => work.catch((error) => {
      if (chart === price) said.textContent = `The price chart could not be read: ${plainError(error)}`;
    });
    buttons.replaceChildren(
      h('button', { type: 'button', class: 'btn btn-small', id: 'bt-price-whole', onclick: () => act(chart.overview()) }, 'Whole period'),
      ...chart.intervals.map((iv) => h('button', {
        type: 'button', class: 'btn btn-small', dataset: { interval: iv }, 'aria-pressed': 'false',
        'aria-label': `${iv} candles`, onclick: () => act(chart.setInterval(iv)),
      }, iv)),
    );
    await act(chart.overview());
  }

  /** A trade's entry on the chart, in the run's own candles. */
  function showOnChart(ms) {
    if (!price) return;
    $('#bt-price').scrollIntoView({ block: 'center', behavior: 'instant' });
    price.focus(ms).catch((error) => {
      $('#bt-price-view').textContent = `The price chart could not be read: ${plainError(error)}`;
    });
  }

  async function showResult(run) {
    const box = $('#bt-result');
    box.hidden = false;
    clearCharts();
    price = null;
    $('#bt-result-title').textContent = `Result of run #${run.id}`;
    $('#bt-result-meta').textContent = `Version ${run.version} · ${run.symbol} ${run.timeframe} · ${dateTime(run.start_ms)} → ${dateTime(run.end_ms)} · initial balance ${usd(run.initial_balance)} USDT · taker fee ${num(Number(run.taker_fee_rate) * 100)}%`;
    const failed = run.status === 'failed';
    $('#bt-result-error').hidden = !failed;
    $('#bt-result-error').textContent = failed ? `This backtest failed: ${run.error || 'no reason given'}` : '';
    $('#bt-result-body').hidden = failed || !run.result;
    box.focus();
    if (failed || !run.result) return;
    const result = run.result;
    const metrics = result.metrics || run.metrics || {};
    fillTable($('#bt-metrics'), METRICS.filter(([key]) => key in metrics).map(([key, label, show]) => {
      const value = metrics[key];
      const cls = typeof value === 'number' && key.endsWith('return_pct') ? (value > 0 ? 'up' : value < 0 ? 'down' : '') : '';
      return h('tr', { dataset: { key } }, h('th', { scope: 'row' }, label), td(show(value), `num ${cls}`.trim(), label));
    }));

    curveChart($('#bt-equity'), result.equity_curve || []);
    curveChart($('#bt-drawdown'), (result.drawdown_curve || []).map(([t, v]) => [t, -Math.abs(v)]), { negative: true });
    $('#bt-equity-desc').textContent = `Equity from ${usd(run.initial_balance)} to ${usd(result.final_equity)} USDT.`;
    $('#bt-dd-desc').textContent = `Deepest drawdown ${plainPct(metrics.max_drawdown_pct)}.`;

    const trades = result.trades || [];
    const fills = trades.flatMap((t) => t.fills || []);
    await showPrice(run, fills);

    const newest = trades.slice(-MAX_TRADE_ROWS).reverse();
    fillTable($('#bt-trades'), newest.map((t, i) => h('tr', { dataset: { key: `${t.entry_time}-${i}` } },
      td(h('span', { class: `side ${t.side}` }, t.side), '', 'Side'),
      td(h('button', {
        type: 'button', class: 'btn btn-small btn-ghost', title: 'Show on the price chart',
        'aria-label': `${dateTime(t.entry_time)}: show on the price chart`, onclick: () => showOnChart(t.entry_time),
      }, dateTime(t.entry_time)), '', 'Entry'),
      td(num(t.entry_price), 'num', 'Entry price'),
      td(t.exit_time ? dateTime(t.exit_time) : 'open at the end', '', 'Exit'),
      td(num(t.exit_price), 'num', 'Exit price'),
      td(num(t.qty), 'num', 'Quantity'),
      td(usd(t.pnl), `num ${Number(t.pnl) > 0 ? 'up' : Number(t.pnl) < 0 ? 'down' : ''}`.trim(), 'PnL (USDT)'),
      td(percent(t.pnl_pct), 'num', 'PnL %'),
      td(h('span', { class: 'cell-note wrap' }, (t.fills || []).map((f) => f.reason).filter(Boolean).join(' → ') || '—'), '', 'Why'),
    )));
    const omitted = trades.length - newest.length + Number(result.trades_omitted || 0);
    $('#bt-trades').caption?.remove();
    if (omitted > 0) $('#bt-trades').prepend(h('caption', { class: 'muted small' }, `The newest ${num(newest.length, 0)} trades; ${num(omitted, 0)} older ones are not listed.`));

    const assumptions = result.assumptions || {};
    $('#bt-assumptions').replaceChildren(...Object.entries(assumptions).flatMap(([k, v]) => [
      h('dt', {}, k.replace(/_/g, ' ')), h('dd', {}, typeof v === 'object' ? JSON.stringify(v) : String(v)),
    ]));
  }

  async function open(id) {
    history.replaceState(null, '', `#backtest-${id}`);
    let run;
    try {
      run = await get(`${base}/${id}`);
    } catch (error) {
      toast(plainError(error), 'error');
      return;
    }
    if (run.status === 'queued' || run.status === 'running') await follow(run);
    else {
      watching = null;
      await showResult(run);
    }
  }

  const listRow = (run) => {
    const ret = run.metrics?.total_return_pct;
    return h('tr', { dataset: { key: String(run.id) } },
      td(`#${run.id} · v${run.version}${run.deployment_id ? ' · drift' : ''}`, '', 'Run'),
      td(`${run.symbol} ${run.timeframe}`, '', 'Market'),
      td(`${dateTime(run.start_ms)} → ${dateTime(run.end_ms)}`, '', 'Period'),
      td(run.status === 'running' ? `Running ${Math.round(run.progress * 100)}%` : (STATUS_TEXT[run.status] || run.status), '', 'Status'),
      td(percent(ret), `num ${ret > 0 ? 'up' : ret < 0 ? 'down' : ''}`.trim(), 'Return'),
      td(run.metrics ? num(run.metrics.num_trades, 0) : '—', 'num', 'Trades'),
      td(h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Show run ${run.id}`, onclick: () => open(run.id) }, 'Show'),
        'actions', '', `show-${run.id}`),
    );
  };

  async function loadList() {
    kept = await get(base);
    fillTable($('#bt-table'), kept.map(listRow));
  }

  onSubmit(form, async (data) => {
    const start = fromInput(data.get('start'));
    const endMs = fromInput(data.get('end'));
    if (!Number.isFinite(start) || !Number.isFinite(endMs)) throw new Error('Enter a start and an end date.');
    if (endMs <= start) throw new Error('The end must be after the start.');
    const body = { start, end: endMs, initial_balance: String(data.get('initial_balance') || '').trim() };
    if (!/^\d+(\.\d+)?$/.test(body.initial_balance)) throw new Error('The initial balance is an amount in USDT, such as 10000.');
    const version = Number(data.get('version'));
    if (version) body.version = version;
    const symbol = String(data.get('symbol') || '').trim().toUpperCase();
    if (symbol) body.symbol = symbol;
    if (data.get('timeframe')) body.timeframe = data.get('timeframe');
    if (String(data.get('taker_fee_pct') || '').trim()) body.taker_fee_rate = pctToRate(data.get('taker_fee_pct'));
    if (String(data.get('maker_fee_pct') || '').trim()) body.maker_fee_rate = pctToRate(data.get('maker_fee_pct'));
    let run;
    try {
      run = await post(base, body);
    } catch (error) {
      throw new Error(plainError(error));
    }
    formError(form, null);
    history.replaceState(null, '', `#backtest-${run.id}`);
    loadList();
    follow(run);
  });

  return {
    load: loadList,
    open,
    show() {},
    versionsChanged() {
      const select = form.elements.version;
      const versions = versionsOf();
      // A choice of an older version stays; the latest follows a newly saved one.
      const chosen = select.value === select.dataset.latest ? '' : select.value;
      select.dataset.latest = versions.length ? String(versions[versions.length - 1].number) : '';
      select.replaceChildren(...[...versions].reverse().map((v) => h('option', { value: String(v.number) }, `Version ${v.number}${v.number === versions[versions.length - 1].number ? ' (latest)' : ''}`)));
      if (chosen && versions.some((v) => String(v.number) === chosen)) select.value = chosen;
      else if (versions.length) select.value = String(versions[versions.length - 1].number);
    },
  };
}
