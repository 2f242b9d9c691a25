// The "Run live" tab: deploy a version into one of my portfolios, pause / resume / stop, status
// and last error, the drift report, and the signal history. Data: /v1/strategies/{id}/
// deployments[…], …/signals, GET /v1/portfolios/my.

import { get, post } from '../api.js';
import { $, fillTable, h, td } from '../dom.js';
import { num, time, usd } from '../format.js';
import { every } from '../live.js';
import { plainError } from './errors.js';
import { watchBacktest } from './progress.js';
import { signalHistory } from './signals.js';
import { busy, confirmDialog, formError, onSubmit, toast } from '../ui.js';

const STATUS_TEXT = { running: 'Running', paused: 'Paused', stopped: 'Stopped' };

export function livePanel(strategyId, versionsOf) {
  const base = `/v1/strategies/${strategyId}`;
  const form = $('#deploy-form');
  let portfolios = [];
  let started = false;
  const history = signalHistory(strategyId, $('#sig-table'), $('#sig-more'));

  const portfolioName = (pid) => portfolios.find((p) => p.id === pid)?.name || `Portfolio ${pid}`;

  async function command(deployment, verb, button) {
    if (verb === 'stop') {
      const ok = await confirmDialog('Stop this deployment for good? Its open position stays in the portfolio.', 'Stop');
      if (!ok) return;
    }
    await busy(button, async () => {
      try {
        await post(`${base}/deployments/${deployment.id}/${verb}`);
        toast({ pause: 'Paused.', resume: 'Running again.', stop: 'Stopped.' }[verb], 'success');
      } catch (error) {
        toast(plainError(error), 'error');
      }
    });
    await refresh();
  }

  const actions = (d) => {
    const name = portfolioName(d.portfolio_id);
    const button = (verb, label, cls = 'btn btn-small') => h('button', {
      type: 'button',
      class: cls,
      'aria-label': `${label} the deployment in ${name}`,
      onclick: (event) => command(d, verb, event.currentTarget),
    }, label);
    const drift = h('button', {
      type: 'button',
      class: 'btn btn-small btn-ghost',
      'aria-label': `Drift report of the deployment in ${name}`,
      onclick: (event) => driftReport(d, event.currentTarget),
    }, 'Drift report');
    return [
      d.status === 'running' ? button('pause', 'Pause') : null,
      d.status === 'paused' ? button('resume', 'Resume') : null,
      d.status !== 'stopped' ? button('stop', 'Stop', 'btn btn-small btn-danger') : null,
      drift,
    ];
  };

  const row = (d) => h('tr', { dataset: { key: String(d.id) } },
    td(h('a', { href: `/app/portfolios/${d.portfolio_id}`, class: 'wrap' }, portfolioName(d.portfolio_id)), '', 'Portfolio'),
    td(`v${d.version}`, '', 'Version'),
    td(`${d.symbol} ${d.timeframe}`, '', 'Market'),
    td(h('span', { class: `badge status-${d.status}` }, STATUS_TEXT[d.status] || d.status), '', 'Status'),
    td(d.last_bar_ms ? time(d.last_bar_ms) : 'not yet', '', 'Last bar'),
    td(h('span', { class: d.last_error ? 'down wrap' : 'muted' }, d.last_error || 'none'), '', 'Last error'),
    td(actions(d), 'actions', '', `${d.id}-${d.status}`),
  );

  async function refresh() {
    const deployments = await get(`${base}/deployments`);
    fillTable($('#dep-table'), deployments.map(row));
    await history.refresh();
  }

  function fillPortfolios() {
    const select = form.elements.portfolio_id;
    const chosen = select.value;
    select.replaceChildren(...portfolios.map((p) => h('option', { value: String(p.id) }, p.name)));
    if (chosen) select.value = chosen;
    $('#dp-no-portfolio').hidden = portfolios.length > 0;
  }

  onSubmit(form, async (data) => {
    const portfolioId = Number(data.get('portfolio_id'));
    if (!portfolioId) throw new Error('Choose a portfolio to run it in.');
    const body = { portfolio_id: portfolioId };
    if (Number(data.get('version'))) body.version = Number(data.get('version'));
    try {
      await post(`${base}/deployments`, body);
    } catch (error) {
      throw new Error(plainError(error));
    }
    formError(form, null);
    toast(`Running in ${portfolioName(portfolioId)}.`, 'success');
    await refresh();
  });

  async function driftReport(deployment, button) {
    const box = $('#drift');
    await busy(button, async () => {
      let run;
      try {
        run = await post(`${base}/deployments/${deployment.id}/drift`);
      } catch (error) {
        toast(plainError(error), 'error');
        return;
      }
      box.hidden = false;
      $('#drift-title').textContent = `Drift report: ${portfolioName(deployment.portfolio_id)}, version ${deployment.version}`;
      $('#drift-bar').hidden = false;
      $('#drift-summary').replaceChildren();
      fillTable($('#drift-table'), []);
      $('#drift-notes').replaceChildren();
      box.focus();
      const final = await watchBacktest(strategyId, run.id, (update) => {
        $('#drift-bar').value = Math.round(Number(update.progress || 0) * 100);
        $('#drift-meta').textContent = `Backtesting the live period… ${$('#drift-bar').value}%`;
      });
      $('#drift-bar').hidden = true;
      showDrift(final);
    });
  }

  function showDrift(run) {
    const drift = run.result?.drift;
    if (run.status === 'failed' || !drift) {
      $('#drift-meta').textContent = `The drift report could not be made: ${run.error || 'no result'}`;
      return;
    }
    $('#drift-meta').textContent = drift.live_from
      ? `Live from ${time(drift.live_from)} to ${time(drift.live_to)}, against a backtest of the same version over that period.`
      : 'Live has not evaluated a bar yet.';
    const s = drift.summary || {};
    const stat = (label, value) => h('div', {}, h('dt', {}, label), h('dd', { class: 'num' }, value));
    $('#drift-summary').replaceChildren(
      stat('Backtest fills', num(s.backtest_fills, 0)),
      stat('Live fills', num(s.live_fills, 0)),
      stat('Refused live', num(s.live_refused, 0)),
      stat('Average slippage', s.avg_slippage === null ? '—' : usd(s.avg_slippage)),
      stat('Average latency', s.avg_latency_ms === null ? '—' : `${num(s.avg_latency_ms / 1000, 1)} s`),
      stat('Live realized PnL', usd(s.live_realized_pnl)),
      stat('Backtest PnL', usd(s.backtest_pnl)),
    );
    const fillText = (f) => `${Number(f.qty) > 0 || f.side === 'BUY' ? 'buy' : 'sell'} ${num(Math.abs(Number(f.qty)))} @ ${num(f.price)}`;
    fillTable($('#drift-table'), [...(drift.bars || [])].reverse().map((b) => h('tr', { dataset: { key: String(b.bar_time) } },
      td(time(b.bar_time), '', 'Bar'),
      td(b.backtest.length ? b.backtest.map(fillText).join('; ') : '—', '', 'Backtest'),
      td(b.live_fills.length ? b.live_fills.map(fillText).join('; ') : (b.live.map((l) => l.outcome).join(', ') || '—'), '', 'Live'),
      td(b.slippage.length ? b.slippage.map((x) => usd(x)).join(', ') : '—', 'num', 'Slippage'),
      td(b.latency_ms.length ? b.latency_ms.map((x) => `${num(x / 1000, 1)} s`).join(', ') : '—', 'num', 'Latency'),
      td(h('span', { class: 'wrap' }, b.explanation || '—'), '', 'Why'),
    )));
    $('#drift-notes').replaceChildren(...(drift.notes || []).map((n) => h('li', {}, n)));
  }

  return {
    async show() {
      if (started) return;
      started = true;
      portfolios = await get('/v1/portfolios/my');
      fillPortfolios();
      // Status, last error and new signals without a reload; the REST API is the truth.
      every(10000, refresh);
    },
    versionsChanged() {
      const select = form.elements.version;
      const versions = versionsOf();
      const chosen = select.value === select.dataset.latest ? '' : select.value;
      select.dataset.latest = versions.length ? String(versions[versions.length - 1].number) : '';
      select.replaceChildren(...[...versions].reverse().map((v) => h('option', { value: String(v.number) }, `Version ${v.number}`)));
      if (chosen && versions.some((v) => String(v.number) === chosen)) select.value = chosen;
      else if (versions.length) select.value = select.dataset.latest;
    },
  };
}
