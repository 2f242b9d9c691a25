// Rendering of the portfolio page's data (no fetching here).

import { del, post } from '../api.js';
import { fillTable, h, td, $ } from '../dom.js';
import { equityChart } from '../charts.js';
import { pct, pnlClass, signedUsd, time, usd } from '../format.js';
import { price, qty } from '../instruments.js';
import { confirmDialog, busy, toast } from '../ui.js';

export function createViews(root) {
  const id = Number(root.dataset.id);
  let chart = null;
  let lastCurveKey = '';
  const refreshers = [];
  const afterAction = () => refreshers.forEach((fn) => fn());

  const set = (sel, text, cls) => {
    const el = $(sel, root);
    el.textContent = text;
    if (cls !== undefined) el.className = `num ${cls}`;
  };

  function header(portfolio, equity) {
    const title = $('#pf-title', root);
    if (title.textContent !== portfolio.name) {
      title.textContent = portfolio.name;
      title.title = portfolio.name;
      document.title = `${portfolio.name} · Papertrade`;
    }
    $('#pf-visibility', root).textContent = portfolio.visibility;
    const start = Number(portfolio.initial_balance);
    const ret = start ? (Number(equity.equity) - start) / start : null;
    set('#stat-equity', `${usd(equity.equity)} USDT`, '');
    set('#stat-return', pct(ret), pnlClass(ret, 4));
    set('#stat-upnl', signedUsd(equity.unrealized_pnl), pnlClass(equity.unrealized_pnl));
    set('#stat-balance', usd(equity.balance), '');
    set('#stat-available', usd(equity.available), '');
    set('#stat-margin', usd(equity.margin_used), '');
  }

  function positions(rows) {
    $('#count-positions', root).textContent = rows.length ? String(rows.length) : '';
    fillTable($('#positions-table', root), rows.map((p) => {
      const close = h('button', { type: 'button', class: 'btn btn-small' }, 'Close');
      close.addEventListener('click', () => busy(close, async () => {
        try {
          await post('/v1/order', {
            portfolio_id: id, symbol: p.symbol, type: 'market', action: 'close',
            quantity: String(Math.abs(p.quantity)),
          });
          toast(`Closed ${p.symbol} at market.`, 'success');
          afterAction();
        } catch (error) {
          toast(error.message, 'error');
        }
      }));
      return h('tr', { 'data-key': p.symbol, 'data-symbol': p.symbol },
        td(h('a', { href: `/markets/${p.symbol}` }, p.symbol), '', 'Symbol'),
        td(h('span', { class: `side ${p.side}` }, `${p.side} ${p.leverage}×`), '', 'Side'),
        td(qty(p.symbol, Math.abs(p.quantity)), 'num', 'Size'),
        td(price(p.symbol, p.entry_price), 'num', 'Entry'),
        td(price(p.symbol, p.mark_price), 'num mark', 'Mark'),
        td(signedUsd(p.unrealized_pnl), `num upnl ${pnlClass(p.unrealized_pnl)}`, 'Unrealized PnL'),
        td(p.liquidation_price ? price(p.symbol, p.liquidation_price) : '—', 'num', 'Liq. price'),
        td(usd(p.margin), 'num', 'Margin'),
        td(close, 'actions', '', `close:${p.quantity}`));
    }));
  }

  function orders(rows) {
    $('#count-orders', root).textContent = rows.length ? String(rows.length) : '';
    fillTable($('#orders-table', root), rows.map((o) => {
      const cancel = h('button', { type: 'button', class: 'btn btn-small' }, 'Cancel');
      cancel.setAttribute('aria-label', `Cancel ${o.side} ${o.symbol} order at ${price(o.symbol, o.price)}`);
      cancel.addEventListener('click', () => busy(cancel, async () => {
        try {
          await del(`/v1/order/${o.id}`);
          toast('Order cancelled.', 'success');
          afterAction();
        } catch (error) {
          toast(error.message, 'error');
        }
      }));
      return h('tr', { 'data-key': o.id, 'data-order-id': o.id },
        td(time(o.created_at), '', 'Time'),
        td(o.symbol, '', 'Symbol'),
        td(h('span', { class: `side ${o.side === 'buy' ? 'long' : 'short'}` }, o.action === 'close' ? `${o.side} (close)` : o.side), '', 'Side'),
        td(`${o.type} ${o.time_in_force}`, '', 'Type'),
        td(price(o.symbol, o.price), 'num', 'Price'),
        td(qty(o.symbol, o.quantity), 'num', 'Quantity'),
        td(qty(o.symbol, o.filled_quantity), 'num', 'Filled'),
        td(cancel, 'actions', '', `cancel:${o.id}`));
    }));
  }

  function fills(rows) {
    fillTable($('#fills-table', root), rows.map((f) => h('tr', { 'data-key': f.id },
      td(time(f.created_at), '', 'Time'),
      td(f.symbol, '', 'Symbol'),
      td(h('span', { class: `side ${f.side === 'buy' ? 'long' : 'short'}` }, f.is_liquidation ? `${f.side} (liquidation)` : f.side), '', 'Side'),
      td(price(f.symbol, f.price), 'num', 'Price'),
      td(qty(f.symbol, f.quantity), 'num', 'Quantity'),
      td(usd(f.quote_quantity), 'num', 'Value'),
      td(`${usd(f.commission)} (${f.liquidity})`, 'num', 'Commission'),
      td(signedUsd(f.realized_pnl), `num ${pnlClass(f.realized_pnl)}`, 'Realized PnL'))));
  }

  // A signal of GET /v1/portfolios/{id}/signals: raw body, status, error code, message, orders.
  const signalText = (s) => String(s.body ?? '');
  const signalOutcome = (s) => String(s.status ?? '');
  function signalDetail(s) {
    const parts = [];
    if (s.msg) parts.push(s.msg);
    if (s.order_ids?.length) parts.push(`order${s.order_ids.length > 1 ? 's' : ''} #${s.order_ids.join(', #')}`);
    if (s.duplicate_of) parts.push(`duplicate of signal #${s.duplicate_of}`);
    return parts.join(' · ') || '—';
  }

  function signals(rows) {
    fillTable($('#signals-table', root), rows.map((s) => h('tr', { 'data-key': s.id, 'data-signal-id': s.id },
      td(time(s.received_at), '', 'Time'),
      td(h('code', { class: 'wrap' }, signalText(s)), '', 'Alert'),
      td(h('span', { class: `outcome outcome-${signalOutcome(s)}` }, signalOutcome(s)), '', 'Outcome'),
      td(signalDetail(s), 'wrap', 'Detail'))));
    const last = $('#last-signals', root);
    last.replaceChildren(...(rows.length ? rows.slice(0, 5).map((s) => h('li', {},
      h('span', { class: `outcome outcome-${signalOutcome(s)}` }, signalOutcome(s)), ' ',
      h('code', { class: 'wrap' }, signalText(s)), ' ',
      h('span', { class: 'muted' }, time(s.received_at)),
      s.msg ? h('div', { class: 'muted small' }, s.msg) : null)) : [h('li', { class: 'muted' }, 'None yet.')]));
  }

  /** The recorded equity marks, then the live equity of each refresh since the last mark. */
  function curve(points, latest, portfolio) {
    chart ??= equityChart($('#equity-chart', root));
    const key = points.length ? `${points.length}:${points[points.length - 1].time}` : 'none';
    if (key !== lastCurveKey) {
      lastCurveKey = key;
      const all = points.map((p) => ({ time: p.time, equity: p.equity }));
      if (!all.length) all.push({ time: portfolio.created_at, equity: portfolio.initial_balance });
      if (latest) all.push(latest);
      chart.setPoints(all);
    } else if (latest) {
      chart.addPoint(latest);
    }
  }

  return {
    header, positions, orders, fills, signals, curve,
    onAction(fn) {
      refreshers.push(fn);
    },
    confirm: confirmDialog,
  };
}
