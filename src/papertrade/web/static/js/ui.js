// Shared interface pieces: toasts, form errors, busy buttons, copy buttons, confirmation,
// tabs and the "shown once" secret box.

import { h, $, $$ } from './dom.js';

export function toast(message, kind = 'info') {
  const box = $('#toasts');
  if (!box) return;
  const item = h('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, withLinks(message));
  box.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}

/** A tier refusal names the API's tier table for API clients ("Upgrade to pro under
 * /v1/launch/tiers."); people read "on the Tiers page" and get a link to it instead. */
const TIER_PATH = /\s*(?:under |\()?\/v1\/launch\/tiers\)?/g;
export function withLinks(message) {
  const text = String(message);
  if (!TIER_PATH.test(text)) return text;
  TIER_PATH.lastIndex = 0;
  return [text.replace(TIER_PATH, ' on the Tiers page'), ' ', h('a', { href: '/tiers' }, 'Compare the tiers')];
}

/** Show an API error in the form's error line (and mark the field when the API names it). */
export function formError(form, error) {
  const line = $('.form-error', form);
  for (const el of $$('[aria-invalid]', form)) el.removeAttribute('aria-invalid');
  if (!error) {
    if (line) line.textContent = '';
    return;
  }
  const message = error.message || String(error);
  if (line) line.replaceChildren(...[withLinks(message)].flat());
  else toast(message, 'error');
  const named = error.field || String(message).match(/^([a-z_]+):/)?.[1];
  const input = named && form.elements.namedItem(named);
  if (input instanceof HTMLElement) {
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
}

/** Run `work` with the button disabled; a second click does nothing meanwhile. */
export async function busy(button, work) {
  if (!button || button.disabled) return undefined;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/** Enable the buttons under `form` (or any container) rendered `disabled data-until-ready`, once
 * their handlers are attached. Until then a click (or Enter) does nothing, rather than the
 * browser's own submission: a GET that would put the fields (a password) in the address and
 * drop its query; or, for the phone views' buttons, a tap that looks taken and is lost. */
export function ready(form) {
  for (const button of form.querySelectorAll('[data-until-ready]')) {
    button.disabled = false;
    button.removeAttribute('data-until-ready');
  }
}

/** Handle a form's submit: prevent the page load, clear errors, show the API's error. */
export function onSubmit(form, handler) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = event.submitter || $('button[type="submit"]', form);
    formError(form, null);
    await busy(button, async () => {
      try {
        await handler(new FormData(form), form);
      } catch (error) {
        formError(form, error);
      }
    });
  });
  ready(form);
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Older browsers or a denied permission: select a temporary field and copy it.
    const area = h('textarea', { class: 'sr-only' }, text);
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

export function copyButton(getText, label = 'Copy') {
  const button = h('button', { type: 'button', class: 'btn btn-small' }, label);
  button.addEventListener('click', async () => {
    const ok = await copyText(typeof getText === 'function' ? getText() : getText);
    button.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

/** Wire every `[data-copy-from=id]` button to copy that field's value. */
export function wireCopyButtons(root = document) {
  for (const button of $$('[data-copy-from]', root)) {
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copyFrom);
      const ok = await copyText(source.value ?? source.textContent);
      const label = button.textContent;
      button.textContent = ok ? 'Copied' : 'Copy failed';
      setTimeout(() => (button.textContent = label), 1500);
    });
  }
}

/** A modal question; resolves true when confirmed. Esc or Cancel resolves false. */
export function confirmDialog(message, confirmLabel = 'Confirm', danger = true) {
  return new Promise((resolve) => {
    const ok = h('button', { type: 'button', class: `btn ${danger ? 'btn-danger' : 'btn-primary'}`, value: 'ok' }, confirmLabel);
    const cancel = h('button', { type: 'button', class: 'btn', value: 'cancel' }, 'Cancel');
    const dialog = h('dialog', { class: 'dialog', 'aria-label': 'Confirm' },
      h('p', {}, message), h('div', { class: 'row-actions' }, cancel, ok));
    document.body.append(dialog);
    const close = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    ok.addEventListener('click', () => close(true));
    cancel.addEventListener('click', () => close(false));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close(false);
    });
    dialog.showModal();
    cancel.focus();
  });
}

/** ARIA tabs: click or arrow keys switch panels. */
export function tabs(list, onChange) {
  const buttons = $$('[role="tab"]', list);
  const select = (button, focus) => {
    for (const b of buttons) {
      const on = b === button;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
      document.getElementById(b.getAttribute('aria-controls')).hidden = !on;
    }
    if (focus) button.focus();
    onChange?.(button.id);
  };
  for (const button of buttons) {
    button.addEventListener('click', () => select(button, false));
    button.addEventListener('keydown', (event) => {
      const i = buttons.indexOf(button);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: buttons.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      select(buttons[(next + buttons.length) % buttons.length], true);
    });
  }
}

/**
 * The box that shows a secret exactly once: a warning, each value with a copy button, and a
 * "Done" button that wipes it from the page.
 */
export function showSecretOnce(box, title, fields, warning) {
  const rows = fields.map(({ label, value, id }) => h('div', { class: 'secret-row' },
    h('label', { for: id }, label),
    h('div', { class: 'copy-field' },
      h('input', { id, value, readonly: true, spellcheck: 'false', class: 'mono' }),
      copyButton(() => value))));
  const done = h('button', { type: 'button', class: 'btn btn-primary' }, 'I have saved it');
  done.addEventListener('click', () => {
    box.replaceChildren();
    box.hidden = true;
  });
  box.replaceChildren(
    h('h3', {}, title),
    h('p', { class: 'warning', role: 'alert' }, warning),
    ...rows,
    done,
  );
  box.hidden = false;
  box.querySelector('input')?.focus();
  box.querySelector('input')?.select();
}
