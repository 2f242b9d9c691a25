// Cross / Isolated for the ticket's symbol, next to leverage: PUT /v1/portfolios/{id}/margin-type.
// Kept apart from the ticket (which is being reworked): it only needs the ticket's symbol and
// the positions the page already loads.

import { api } from '../api.js';
import { $ } from '../dom.js';
import { toast } from '../ui.js';

export function setupMarginMode({ root, portfolioId, ticket }) {
  const form = $('#margin-type-form', root);
  if (!form) return { positionsChanged() {} };
  const select = $('#t-margin-type', form);
  const error = $('.form-error', form);
  let positions = [];

  function sync() {
    $('#mt-symbol', form).textContent = ticket.symbol() || '—';
    const held = positions.find((p) => p.symbol === ticket.symbol());
    if (held && document.activeElement !== select) select.value = held.margin_type;
    // An open position keeps its margin type until it is closed.
    select.disabled = Boolean(held);
    $('.mt-held-symbol', form).textContent = ticket.symbol() || 'open';
    for (const hint of form.querySelectorAll('#mt-hint [data-when]')) {
      const idle = (hint.dataset.when === 'held') !== Boolean(held);
      hint.classList.toggle('idle', idle);
      hint.setAttribute('aria-hidden', String(idle));
    }
  }

  select.addEventListener('change', async () => {
    error.textContent = '';
    const body = { symbol: ticket.symbol(), margin_type: select.value };
    try {
      await api('PUT', `/v1/portfolios/${portfolioId}/margin-type`, body);
      toast(`${body.symbol} is now ${select.value === 'isolated' ? 'isolated' : 'cross'} margin.`, 'success');
    } catch (failure) {
      if (failure.code === 'margin_type_unchanged') return; // it already was
      error.textContent = failure.message;
    }
  });

  ticket.onSymbolChange(sync);
  sync();
  return {
    positionsChanged(next) {
      positions = next;
      sync();
    },
  };
}
