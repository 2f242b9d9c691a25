// Display formatting only: every number shown comes from the API as it is.

const usdFmt = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export function usd(value) {
  if (value === null || value === undefined || Number.isNaN(Number(value))) return '—';
  return usdFmt.format(Number(value));
}

export function signedUsd(value) {
  if (value === null || value === undefined) return '—';
  const n = Number(value);
  const text = usdFmt.format(n);
  if (/^-?0\.00$/.test(text)) return '0.00';
  return (n > 0 ? '+' : '') + text;
}

export function pct(value, digits = 2) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return '—';
  const text = (Number(value) * 100).toFixed(digits);
  if (Number(text) === 0) return `${(0).toFixed(digits)}%`;
  return `${Number(text) > 0 ? '+' : ''}${text}%`;
}

/** Decimals implied by a tick or step size such as 0.1, 1e-7 or 1. */
export function decimalsOf(step) {
  const n = Number(step);
  if (!n || n >= 1) return 0;
  return Math.min(12, Math.max(0, Math.round(-Math.log10(n))));
}

/**
 * A price or quantity, grouped. With `decimals` it is fixed; without, it keeps what the value
 * needs (up to a precision that suits its size) and drops trailing zeros.
 */
export function num(value, decimals) {
  if (value === null || value === undefined || value === '') return '—';
  const n = Number(value);
  if (!Number.isFinite(n)) return '—';
  if (decimals !== undefined) {
    return n.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  }
  const a = Math.abs(n);
  const max = a >= 1000 ? 2 : a >= 1 ? 4 : a >= 0.01 ? 6 : 8;
  return n.toLocaleString('en-US', { minimumFractionDigits: a >= 1000 ? 2 : 0, maximumFractionDigits: max });
}

/** up / down / nothing, for a value as it shows once rounded to `decimals` places. */
export function pnlClass(value, decimals = 2) {
  const n = Math.round(Number(value) * 10 ** decimals);
  if (n > 0) return 'up';
  if (n < 0) return 'down';
  return '';
}

export function time(ms) {
  if (!ms) return '—';
  const d = new Date(Number(ms));
  const sameDay = new Date().toDateString() === d.toDateString();
  return sameDay
    ? d.toLocaleTimeString('en-GB')
    : `${d.toLocaleDateString('en-CA')} ${d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })}`;
}

/** Always the date and the time, "2026-10-29 07:30" (seconds only when not :00): for
 * periods and records that may lie on any day, where `time` would drop today's date. */
export function dateTime(ms) {
  if (ms === null || ms === undefined || ms === '' || !Number.isFinite(Number(ms))) return '—';
  const d = new Date(Number(ms));
  const two = (n) => String(n).padStart(2, '0');
  const seconds = d.getSeconds() ? `:${two(d.getSeconds())}` : '';
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}${seconds}`;
}

export function ago(ms) {
  if (!ms) return 'never';
  const s = Math.max(0, Math.round((Date.now() - Number(ms)) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function countdown(ms) {
  const s = Math.max(0, Math.round((Number(ms) - Date.now()) / 1000));
  const hh = String(Math.floor(s / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}`;
}

/** A value already in percent (e.g. 12.5 for 12.5 %), signed. */
export function percent(value, digits = 2) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return '—';
  const text = Number(value).toFixed(digits);
  if (Number(text) === 0) return `${(0).toFixed(digits)}%`;
  return `${Number(text) > 0 ? '+' : ''}${text}%`;
}

/**
 * The time-weighted return (a fraction) of an equity read (GET …/equity: `return_pct`, the
 * current period's, where top-ups, transfers and profit shares are cash flows, not gains;
 * docs/trading.md "Returns"), at the live equity it now holds. No flow happens between reads
 * (a top-up reloads them), so the return since the read grows with the equity: (1 + r) × now / then.
 */
export function liveReturn(read) {
  if (!read || read.return_pct === null || read.return_pct === undefined) return null;
  const then = Number(read.equity_at_read ?? read.equity);
  const r = Number(read.return_pct) / 100;
  return then > 0 ? (1 + r) * (Number(read.equity) / then) - 1 : r;
}
