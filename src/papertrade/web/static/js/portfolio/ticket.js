// The order ticket (market / limit, buy / sell, size in USDT or base units, close-only) and the
// leverage form. POST /v1/order and POST /v1/portfolios/{id}/leverage.

import { get, post } from '../api.js';
import { h, $ } from '../dom.js';
import { usd } from '../format.js';
import { instruments, loadInstruments, price, qty } from '../instruments.js';
import { every } from '../live.js';
import { onSubmit, toast } from '../ui.js';

const REMEMBER = 'papertrade.ticket.symbol';

export function setupTicket({ root, portfolioId, refresh, views }) {
  const form = $('#ticket', root);
  const symbolSelect = $('#t-symbol', form);
  const unitSelect = $('#t-unit', form);
  const submit = $('#t-submit', form);
  const markEl = $('#t-mark', form);
  const leverageForm = $('#leverage-form', root);
  const leverageInput = $('#t-leverage', leverageForm);
  let positions = [];
  let mark = null;
  const symbolListeners = [];

  const current = () => instruments.get(symbolSelect.value);
  const value = (name) => form.querySelector(`[name="${name}"]:checked`)?.value;

  function sync() {
    const instrument = current();
    const type = value('type');
    const side = value('side');
    const closeOnly = $('#t-close', form).checked;
    $('#t-limit-fields', form).hidden = type !== 'limit';
    for (const input of form.querySelectorAll('[name="side"]')) input.disabled = closeOnly;
    const base = instrument?.base_asset || 'Base';
    unitSelect.options[1].textContent = base;
    const verb = closeOnly ? 'Close' : side === 'buy' ? 'Buy / Long' : 'Sell / Short';
    submit.textContent = `${verb} ${symbolSelect.value || ''}`.trim();
    submit.className = `btn btn-block ${closeOnly ? 'btn-primary' : side === 'buy' ? 'btn-buy' : 'btn-sell'}`;
    $('#t-chart', form).href = `/markets/${symbolSelect.value}`;
    $('#lev-symbol', leverageForm).textContent = symbolSelect.value || '—';
    const held = positions.find((p) => p.symbol === symbolSelect.value);
    leverageInput.max = instrument?.max_leverage || 125;
    if (document.activeElement !== leverageInput) {
      leverageInput.value = held ? held.leverage : '';
      leverageInput.placeholder = held ? '' : 'default';
    }
    $('#lev-hint', leverageForm).textContent = instrument ? `1× to ${instrument.max_leverage}×${held ? `, position at ${held.leverage}×` : ''}` : '';
    showMark();
  }

  function showMark() {
    markEl.textContent = mark === null ? '—' : price(symbolSelect.value, mark);
  }

  async function loadQuote() {
    if (!symbolSelect.value) return;
    const [quote] = await get(`/v1/market/quotes?symbol=${encodeURIComponent(symbolSelect.value)}`);
    mark = quote ? quote.mark_price : null;
    showMark();
  }

  async function loadSymbols() {
    const symbols = await loadInstruments();
    const remembered = localStorage.getItem(REMEMBER);
    const initial = instruments.has(remembered) ? remembered : instruments.has('BTCUSDT') ? 'BTCUSDT' : symbols[0]?.symbol;
    symbolSelect.replaceChildren(...symbols.map((s) => h('option', { value: s.symbol, selected: s.symbol === initial }, s.symbol)));
    sync();
    quotes.now();
    symbolListeners.forEach((fn) => fn(symbolSelect.value));
  }

  form.addEventListener('change', (event) => {
    if (event.target === symbolSelect) {
      localStorage.setItem(REMEMBER, symbolSelect.value);
      mark = null;
      quotes.now();
      symbolListeners.forEach((fn) => fn(symbolSelect.value));
    }
    sync();
  });

  const clean = (text) => String(text ?? '').trim().replace(/[ ,_]/g, '');

  onSubmit(form, async (data) => {
    const closeOnly = Boolean(data.get('close_only'));
    const type = data.get('type');
    const size = clean(data.get('size'));
    if (!size) {
      $('#t-size', form).focus();
      throw new Error('Enter a size.');
    }
    const body = {
      portfolio_id: portfolioId,
      symbol: symbolSelect.value,
      type,
      action: closeOnly ? 'close' : 'open',
    };
    if (!closeOnly) body.side = data.get('side');
    if (data.get('unit') === 'usd') body.size_usd = size;
    else body.quantity = size;
    if (type === 'limit') {
      const price = clean(data.get('price'));
      if (!price) {
        $('#t-price', form).focus();
        throw new Error('A limit order needs a price.');
      }
      body.price = price;
      body.time_in_force = data.get('time_in_force');
    }
    const order = await post('/v1/order', body);
    const what = `${order.side} ${qty(order.symbol, order.quantity)} ${order.symbol}`;
    if (order.status === 'filled') toast(`Filled: ${what} at ${price(order.symbol, order.avg_price)} (fee ${usd(order.commission)} USDT).`, 'success');
    else if (order.status === 'new' || order.status === 'partially_filled') toast(`Limit order placed: ${what} at ${price(order.symbol, order.price)}.`, 'success');
    else toast(`Order ${order.status}: ${what}.`, 'info');
    form.elements.size.value = '';
    await refresh();
  });

  onSubmit(leverageForm, async (data) => {
    const leverage = Number(data.get('leverage'));
    if (!Number.isInteger(leverage) || leverage < 1) {
      leverageInput.focus();
      throw new Error('Leverage is a whole number from 1.');
    }
    const result = await post(`/v1/portfolios/${portfolioId}/leverage`, { symbol: symbolSelect.value, leverage });
    toast(`${result.symbol} leverage set to ${result.leverage}× (positions up to ${usd(result.max_notional)} USDT).`, 'success');
    leverageInput.blur();
    await refresh();
  });

  const quotes = every(2000, loadQuote);
  loadSymbols().catch((error) => toast(error.message, 'error'));
  views.onAction(refresh);

  return {
    symbol: () => symbolSelect.value,
    /** While the socket streams marks, the quote poll is only a safety net. */
    setLive(on) {
      quotes.setPeriod(on ? 15000 : 2000);
    },
    onSymbolChange(fn) {
      symbolListeners.push(fn);
    },
    positionsChanged(next) {
      positions = next;
      sync();
    },
    onMark(message) {
      const data = message.data ?? message;
      const symbol = data.symbol ?? data.s;
      const price = data.mark_price ?? data.markPrice ?? data.price ?? data.p;
      if (symbol === symbolSelect.value && price !== undefined) {
        mark = price;
        showMark();
      }
    },
  };
}
