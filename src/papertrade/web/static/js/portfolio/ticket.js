// The order ticket (market / limit / stop orders, buy / sell, size in USDT, base units or % of
// the available margin, take-profit / stop-loss, reduce-only) with a live preview of what will
// really be sent, and the leverage form. POST /v1/order/preview as the user types, then
// POST /v1/order or /v1/conditional-order; POST /v1/portfolios/{id}/leverage.

import { get, post } from '../api.js';
import { h, $ } from '../dom.js';
import { num, usd } from '../format.js';
import { instruments, loadInstruments, price, qty } from '../instruments.js';
import { coalesce, every } from '../live.js';
import { onSubmit, toast } from '../ui.js';

const REMEMBER = 'papertrade.ticket.symbol';
// Conditional orders that place a LIMIT order when they trigger (they take a limit price).
const LIMIT_STOPS = new Set(['stop', 'take_profit']);

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
    const stopKind = $('#t-stop-kind', form).value;
    const trailing = type === 'stop' && stopKind === 'trailing_stop_market';
    $('#t-stop-fields', form).hidden = type !== 'stop';
    $('#t-callback-field', form).hidden = !trailing;
    $('#t-trigger-label', form).textContent = trailing ? 'Activation price (USDT, optional)' : 'Trigger price (USDT)';
    $('#t-limit-fields', form).hidden = !(type === 'limit' || (type === 'stop' && LIMIT_STOPS.has(stopKind)));
    $('#t-exits', form).hidden = type === 'stop' || closeOnly;
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
    // The position's own leverage is the field's value; the hint keeps one length, so a fill
    // never moves the order button below it.
    $('#lev-hint', leverageForm).textContent = instrument ? `1× to ${instrument.max_leverage}×` : '';
    showMark();
    previewSoon();
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

  // ---- The preview: what the order path will do with what is typed so far. -------------
  const pctInput = $('#t-pct', form);
  const sizeInput = $('#t-size', form);
  let lastPreview = null;
  let previewSeq = 0;
  const show = (sel, text) => { $(sel, form).textContent = text; };

  /** The body both the preview and the order take: size as USDT or base units. */
  function sizing(data, preview) {
    const unit = data.get('unit');
    const size = clean(data.get('size'));
    if (!size || !(Number(size) > 0)) return null;
    if (unit === 'base') return { quantity: size };
    if (unit === 'pct') {
      const share = Math.min(Number(size), 100) / 100;
      const known = preview ?? lastPreview;
      if (!known) return null;
      // Share of the available margin, turned into a position size at the symbol's leverage,
      // keeping room for the taker fee.
      const lev = Number(known.leverage);
      const usdSize = (Number(known.available) * share * lev) / (1 + lev * Number(known.fee_rate));
      return usdSize > 0 ? { size_usd: usdSize.toFixed(2) } : null;
    }
    return { size_usd: size };
  }

  function orderType(data) {
    const type = data.get('type');
    return type === 'stop' ? 'market' : type;
  }

  function holdBelowMinimum(below) {
    if (submit.hasAttribute('data-until-ready') || submit.getAttribute('aria-busy') === 'true') return;
    submit.disabled = below;
    if (below) submit.setAttribute('aria-describedby', 't-problems');
    else submit.removeAttribute('aria-describedby');
  }

  async function refreshPreview() {
    if (!symbolSelect.value) return;
    const data = new FormData(form);
    const closeOnly = Boolean(data.get('close_only'));
    const seq = ++previewSeq;
    const body = { portfolio_id: portfolioId, symbol: symbolSelect.value, type: orderType(data), action: closeOnly ? 'close' : 'open' };
    if (!closeOnly) body.side = data.get('side');
    const limitPrice = clean(data.get('price'));
    if (body.type === 'limit' && Number(limitPrice) > 0) body.price = limitPrice;
    else body.type = 'market';
    const size = sizing(data) ?? { size_usd: '0.01' };
    const known = sizing(data) !== null;
    let result;
    try {
      result = await post('/v1/order/preview', { ...body, ...size });
    } catch {
      return; // a preview that fails says nothing new; the order itself will explain
    }
    if (seq !== previewSeq) return; // a newer keystroke already asked again
    lastPreview = result;
    const base = current()?.base_asset || '';
    show('#t-minimum', result.minimum.replace(/ at .*$/, '') + ` (at ${price(result.symbol, result.price)})`);
    show('#pv-available', `${usd(result.available)} USDT`);
    if (!known) {
      for (const sel of ['#pv-quantity', '#pv-notional', '#pv-margin', '#pv-fee', '#pv-liq']) show(sel, '—');
      $('#t-problems', form).textContent = '';
      holdBelowMinimum(false);
      return;
    }
    // The server's own minimum (the preview's min_quantity, what the order path applies): under
    // it the button waits, so the ticket never sends what it says is too small.
    holdBelowMinimum(!closeOnly && Number(result.quantity) < Number(result.min_quantity));
    show('#pv-quantity', `${qty(result.symbol, result.quantity)} ${base}`);
    show('#pv-notional', `${usd(result.notional)} USDT`);
    show('#pv-margin', `${usd(result.initial_margin)} USDT at ${result.leverage}×`);
    show('#pv-fee', `${usd(result.fee)} USDT (${num(Number(result.fee_rate) * 100, 3)} % ${result.liquidity})`);
    show('#pv-liq', result.liquidation_price ? price(result.symbol, result.liquidation_price) : 'none in range');
    $('#t-problems', form).textContent = result.problems.join(' ');
  }
  const previewSoon = coalesce(250, () => refreshPreview());

  function setShare(share) {
    unitSelect.value = 'pct';
    sizeInput.value = String(share);
    pctInput.value = String(share);
    sync();
  }
  pctInput.addEventListener('input', () => setShare(Number(pctInput.value)));
  $('#t-max', form).addEventListener('click', () => setShare(100));
  form.addEventListener('input', (event) => {
    if (event.target === sizeInput && unitSelect.value === 'pct') pctInput.value = sizeInput.value || '0';
    if (event.target !== pctInput) previewSoon();
  });

  onSubmit(form, async (data) => {
    const closeOnly = Boolean(data.get('close_only'));
    const type = data.get('type');
    const sized = sizing(data, unitSelect.value === 'pct' ? await fetchPreviewNow() : null);
    if (!sized) {
      sizeInput.focus();
      if (!clean(data.get('size'))) throw new Error('Enter a size.');
      throw new Error(unitSelect.value === 'pct' ? 'Choose a share of the available margin above 0 %.' : 'Enter a size above 0.');
    }
    if (type === 'stop') {
      await placeStop(data, sized, closeOnly);
    } else {
      await placeOrder(data, sized, closeOnly, type);
    }
    form.elements.size.value = '';
    pctInput.value = '0';
    sync();
    await refresh();
  });

  async function fetchPreviewNow() {
    await refreshPreview();
    return lastPreview;
  }

  async function placeOrder(data, sized, closeOnly, type) {
    const body = { portfolio_id: portfolioId, symbol: symbolSelect.value, type, action: closeOnly ? 'close' : 'open', ...sized };
    if (!closeOnly) body.side = data.get('side');
    if (type === 'limit') {
      const limitPrice = clean(data.get('price'));
      if (!limitPrice) {
        $('#t-price', form).focus();
        throw new Error('A limit order needs a price.');
      }
      body.price = limitPrice;
      body.time_in_force = data.get('time_in_force');
    }
    const tp = clean(data.get('take_profit'));
    const sl = clean(data.get('stop_loss'));
    if (!closeOnly && tp) body.take_profit = tp;
    if (!closeOnly && sl) body.stop_loss = sl;
    const order = await post('/v1/order', body);
    const what = `${order.side} ${qty(order.symbol, order.quantity)} ${order.symbol}`;
    const exits = order.attached?.length ? ` with ${order.attached.map((c) => `${c.type.startsWith('take') ? 'TP' : 'SL'} ${price(c.symbol, c.trigger_price)}`).join(' and ')}` : '';
    if (order.status === 'filled') toast(`Filled: ${what} at ${price(order.symbol, order.avg_price)} (fee ${usd(order.commission)} USDT)${exits}.`, 'success');
    else if (order.status === 'new' || order.status === 'partially_filled') toast(`Limit order placed: ${what} at ${price(order.symbol, order.price)}${exits}.`, 'success');
    else toast(`Order ${order.status}: ${what}${order.reason ? ` — ${order.reason}` : ''}.`, 'info');
    for (const name of ['take_profit', 'stop_loss']) form.elements[name].value = '';
  }

  async function placeStop(data, sized, closeOnly) {
    const kind = data.get('stop_kind');
    const body = {
      portfolio_id: portfolioId,
      symbol: symbolSelect.value,
      side: closeOnly ? (lastPreview?.side ?? data.get('side')) : data.get('side'),
      type: kind,
      working_price: data.get('working_price'),
      reduce_only: closeOnly,
    };
    // Conditional orders take base units: the preview has already rounded a USDT size.
    if (sized.quantity) body.quantity = sized.quantity;
    else {
      const seen = await post('/v1/order/preview', { portfolio_id: portfolioId, symbol: symbolSelect.value, side: body.side, type: 'market', ...sized });
      if (!(Number(seen.quantity) > 0)) throw new Error(seen.problems.join(' ') || 'That size is below the minimum order.');
      body.quantity = String(seen.quantity);
    }
    const trigger = clean(data.get('trigger_price'));
    if (kind === 'trailing_stop_market') {
      body.callback_rate = clean(data.get('callback_rate')) || '1';
      if (trigger) body.activation_price = trigger;
    } else {
      if (!trigger) {
        $('#t-trigger', form).focus();
        throw new Error('A stop order needs a trigger price.');
      }
      body.trigger_price = trigger;
    }
    if (LIMIT_STOPS.has(kind)) {
      const limitPrice = clean(data.get('price'));
      if (!limitPrice) {
        $('#t-price', form).focus();
        throw new Error(`A ${kind === 'stop' ? 'stop' : 'take-profit'} limit order needs a limit price.`);
      }
      body.price = limitPrice;
      body.time_in_force = data.get('time_in_force');
    }
    const placed = await post('/v1/conditional-order', body);
    const at = placed.trigger_price ? ` at ${price(placed.symbol, placed.trigger_price)}` : ` (callback ${placed.callback_rate} %)`;
    toast(`${placed.type.replaceAll('_', ' ')} order waiting: ${placed.side} ${qty(placed.symbol, placed.quantity)} ${placed.symbol}${at}.`, 'success');
  }

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
    /** Preselect a side and bring the size field into view (the phone's Buy / Sell bar). */
    start(side) {
      form.querySelector(`[name="side"][value="${side}"]`).checked = true;
      $('#t-close', form).checked = false;
      sync();
      sizeInput.focus();
    },
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
        if (sizeInput.value) previewSoon();
      }
    },
  };
}
