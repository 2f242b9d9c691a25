// One strategy: the editor (save as a new version, errors at their line), its versions, its
// backtests and where it runs live. Data: /v1/strategies/{id} and its sub-resources.

import { del, get, patch, post } from '../api.js';
import { $, fillTable, h, td } from '../dom.js';
import { time } from '../format.js';
import { backtestPanel } from '../strategy/backtest.js';
import { livePanel } from '../strategy/deploy.js';
import { createEditor, sourceErrorAt } from '../strategy/editor.js';
import { plainError } from '../strategy/errors.js';
import { busy, confirmDialog, tabs, toast } from '../ui.js';

const root = $('#strategy');
const id = Number(root.dataset.id);
const kind = root.dataset.kind;
const base = `/v1/strategies/${id}`;

let strategy = null;
let versions = [];
let errorAt = null;
let viewing = null;

const editor = createEditor($('#editor'), {
  language: kind,
  label: `Source (${kind === 'python' ? 'Python' : 'strategy DSL'})`,
  onChange: () => {
    $('#save-state').textContent = 'Unsaved changes';
  },
});
const viewer = createEditor($('#version-source'), { language: kind, readOnly: true, label: 'Source of the selected version' });

const backtests = backtestPanel(id, () => versions);
const live = livePanel(id, () => versions);

function showSourceError(error) {
  const box = $('#source-error');
  if (!error) {
    box.hidden = true;
    errorAt = null;
    editor.clearErrors();
    return;
  }
  const at = error.code === 'invalid_strategy_source' ? sourceErrorAt(error.message) : null;
  errorAt = at;
  $('#source-error-text').textContent = at
    ? `Line ${at.line}, column ${at.column}: ${at.message}`
    : plainError(error);
  $('#source-error-goto').hidden = !at;
  box.hidden = false;
  if (at) editor.showError(at.line, at.column, at.message);
}

$('#source-error-goto').addEventListener('click', () => {
  if (!errorAt) return;
  editor.showError(errorAt.line, errorAt.column, errorAt.message);
  editor.focus();
});

function summaryItems(summary) {
  const items = [];
  if (summary.symbol) items.push(['Symbol', summary.symbol]);
  if (summary.timeframe) items.push(['Timeframe', summary.timeframe]);
  if (summary.leverage) items.push(['Leverage', `${summary.leverage}×`]);
  if (summary.rules) items.push(['Rules', String(summary.rules.length)]);
  return items.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]);
}

function drawVersions() {
  const rows = [...versions].reverse().map((v) => h('tr', { dataset: { key: String(v.number) } },
    td(`v${v.number}`, 'num', '#'),
    td(time(v.created_at), '', 'Saved'),
    td(`${v.summary?.symbol || '—'} ${v.summary?.timeframe || ''}`, '', 'Symbol'),
    td(h('button', {
      type: 'button',
      class: 'btn btn-small',
      'aria-label': `View version ${v.number}`,
      onclick: () => viewVersion(v.number),
    }, 'View'), 'actions', '', `view-${v.number}`),
  ));
  fillTable($('#versions-table'), rows);
  const latest = versions[versions.length - 1];
  $('#editor-base').textContent = latest ? `(based on version ${latest.number})` : '';
  if (latest) $('#summary').replaceChildren(...summaryItems(latest.summary || {}));
  backtests.versionsChanged();
  live.versionsChanged();
}

async function viewVersion(number) {
  const version = await get(`${base}/versions/${number}`);
  viewing = version;
  viewer.setText(version.source);
  $('#version-view-title').textContent = `Version ${number}, saved ${time(version.created_at)}`;
  $('#version-view').hidden = false;
  $('#version-view-title').scrollIntoView({ block: 'nearest' });
}

$('#version-close').addEventListener('click', () => {
  $('#version-view').hidden = true;
  viewing = null;
});
$('#version-load').addEventListener('click', () => {
  if (!viewing) return;
  editor.setText(viewing.source);
  showSourceError(null);
  editor.focus();
});

async function save() {
  await busy($('#save-version'), async () => {
    try {
      const version = await post(`${base}/versions`, { source: editor.getText() });
      showSourceError(null);
      versions.push(version);
      drawVersions();
      $('#save-state').textContent = `Saved as version ${version.number}.`;
      toast(`Saved as version ${version.number}.`, 'success');
    } catch (error) {
      $('#save-state').textContent = 'Not saved.';
      showSourceError(error);
    }
  });
}

$('#save-version').addEventListener('click', save);
$('#editor').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    save();
  }
});

function drawVisibility() {
  const isPublic = strategy.visibility === 'public';
  $('#st-visibility').textContent = isPublic ? 'Public' : 'Private';
  $('#st-public-link').hidden = !isPublic;
  $('#st-toggle-public').textContent = isPublic ? 'Make private' : 'Make public';
}

$('#st-toggle-public').addEventListener('click', (event) => busy(event.currentTarget, async () => {
  try {
    const next = strategy.visibility === 'public' ? 'private' : 'public';
    strategy = { ...strategy, ...(await patch(base, { visibility: next })) };
    drawVisibility();
    toast(next === 'public' ? 'Anyone can now read it and its signals.' : 'Only you can see it now.', 'success');
  } catch (error) {
    toast(plainError(error), 'error');
  }
}));

$('#st-delete').addEventListener('click', async () => {
  const ok = await confirmDialog('Delete this strategy? Its deployments stop; its history is kept.', 'Delete');
  if (!ok) return;
  try {
    await del(base);
    location.assign('/app/strategies');
  } catch (error) {
    toast(plainError(error), 'error');
  }
});

tabs($('.tabs'), (tab) => {
  const keep = tab === 'tab-backtest' && location.hash.startsWith('#backtest');
  if (!keep) history.replaceState(null, '', { 'tab-live': '#live', 'tab-backtest': '#backtest' }[tab] || location.pathname);
  if (tab === 'tab-live') live.show();
  if (tab === 'tab-backtest') backtests.show();
});

async function load() {
  [strategy, versions] = await Promise.all([get(base), get(`${base}/versions`)]);
  versions.sort((a, b) => a.number - b.number);
  editor.setText(strategy.source);
  $('#save-state').textContent = '';
  drawVisibility();
  drawVersions();
  await backtests.load();
  await followHash();
}

/** `#backtest-7` opens that result on the Backtest tab, `#live` the Run live tab: links to a
 * result or to the deployments can be shared and bookmarked. */
async function followHash() {
  const run = /^#backtest-(\d+)$/.exec(location.hash);
  if (run) {
    $('#tab-backtest').click();
    await backtests.open(Number(run[1]));
  } else if (location.hash === '#backtest') $('#tab-backtest').click();
  else if (location.hash === '#live') $('#tab-live').click();
}

window.addEventListener('hashchange', followHash);
load();
