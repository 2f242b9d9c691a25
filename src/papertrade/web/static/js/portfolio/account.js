// The Account panel: top-up, reset, rename / visibility / realism profile, delete.
// /v1/portfolios/{id}/top-up, /reset, PATCH and DELETE /v1/portfolios/{id}.

import { del, patch, post } from '../api.js';
import { $ } from '../dom.js';
import { usd } from '../format.js';
import { confirmDialog, onSubmit, toast } from '../ui.js';

const clean = (text) => String(text ?? '').trim().replace(/[ ,_]/g, '');

export function setupAccount({ root, portfolioId, refresh, getPortfolio }) {
  const base = `/v1/portfolios/${portfolioId}`;
  const settings = $('#settings-form', root);
  let filled = false;

  const fillSettings = () => {
    const portfolio = getPortfolio();
    if (!portfolio || filled) return;
    filled = true;
    settings.elements.name.value = portfolio.name;
    settings.elements.public.checked = portfolio.visibility === 'public';
    settings.elements.realism.value = portfolio.realism;
  };
  const wait = setInterval(() => {
    fillSettings();
    if (filled) clearInterval(wait);
  }, 200);

  onSubmit($('#topup-form', root), async (data, form) => {
    const amount = clean(data.get('amount'));
    if (!amount) throw new Error('amount: Enter an amount of USDT.');
    const portfolio = await post(`${base}/top-up`, { amount });
    form.reset();
    toast(`Topped up: wallet balance ${usd(portfolio.balance)} USDT.`, 'success');
    await refresh();
  });

  onSubmit($('#reset-form', root), async (data, form) => {
    const balance = clean(data.get('initial_balance'));
    const ok = await confirmDialog('Reset this portfolio? Every open order is cancelled and every position closed without PnL; the balance goes back to the starting balance. Keys and webhooks stay valid.', 'Reset');
    if (!ok) return;
    const portfolio = await post(`${base}/reset`, balance ? { initial_balance: balance } : {});
    form.reset();
    toast(`Reset: balance ${usd(portfolio.balance)} USDT.`, 'success');
    await refresh();
  });

  onSubmit(settings, async (data) => {
    const portfolio = await patch(base, {
      name: String(data.get('name')).trim(),
      visibility: data.get('public') ? 'public' : 'private',
      realism: String(data.get('realism')),
    });
    toast(portfolio.visibility === 'public' ? `Saved. Public page: /p/${portfolio.code}` : 'Saved.', 'success');
    await refresh();
  });

  $('#delete-portfolio', root).addEventListener('click', async () => {
    const ok = await confirmDialog('Delete this portfolio? It disappears from every list and its keys and webhooks stop working. Its history is kept.', 'Delete');
    if (!ok) return;
    try {
      await del(base);
      location.assign('/app');
    } catch (error) {
      toast(error.message, 'error');
    }
  });
}
