// The one way the app talks to the service: same-origin fetch of the native /v1 API with the
// session cookie. Writes carry the csrf_token cookie's value in X-CSRF-Token.

export class ApiError extends Error {
  /** `retryAfter`: seconds the service asked us to wait (a 429's Retry-After), else null.
   * `field`: the input a validation error names, when it names one. */
  constructor(status, code, message, retryAfter = null, field = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.field = field;
  }
}

// The API's validation messages are written for programmers ("initial_balance: Input should be
// a valid decimal"); people see them in words ("Initial balance must be a number.").
const PLAIN = [
  [/^Input should be a valid integer/, () => 'must be a whole number'],
  [/^Input should be a valid (decimal|number)/, () => 'must be a number'],
  [/^Input should be a JSON number or a plain decimal/, () => 'must be a number, like 12.5'],
  [/^Input should be greater than or equal to (\S+)/, (m) => `must be at least ${m[1]}`],
  [/^Input should be greater than (\S+)/, (m) => `must be more than ${m[1]}`],
  [/^Input should be less than or equal to (\S+)/, (m) => `must be at most ${Number(m[1]).toLocaleString('en-US')}`],
  [/^Input should be less than (\S+)/, (m) => `must be less than ${Number(m[1]).toLocaleString('en-US')}`],
  [/^Field required/, () => 'is required'],
  [/^String should have at most (\d+) characters?/, (m) => `is too long (at most ${m[1]} characters)`],
  [/^String should have at least 1 character/, () => 'must not be empty'],
  [/^String should have at least (\d+) characters?/, (m) => `is too short (at least ${m[1]} characters)`],
  [/^String should match pattern/, () => 'contains characters that are not allowed'],
  [/^Decimal input should have no more than (\d+) decimal places?/, (m) => `takes at most ${m[1]} decimals`],
  [/^Decimal input should have no more than (\d+) digits?/, () => 'has too many digits'],
  [/^Extra inputs are not permitted/, () => 'is not a setting this form takes'],
  [/^Input should be (.+)/, (m) => `should be ${m[1]}`],
];

function plainPart(part) {
  const found = part.match(/^([A-Za-z_][\w.]*): (.*)$/s);
  if (!found) return { text: part, field: null };
  const [, path, detail] = found;
  const field = path.split('.').pop();
  const said = detail.replace(/^Value error, /, '');
  const sentence = (text) => text.charAt(0).toUpperCase() + text.slice(1).replace(/\.?$/, '.');
  if (field === 'body' || said !== detail) {
    return { text: sentence(said), field: field === 'body' ? null : field };
  }
  // portfolio_id → "Portfolio", taker_fee_rate → "Taker fee rate"
  const label = field.replace(/_id$/, '').replaceAll('_', ' ');
  for (const [pattern, words] of PLAIN) {
    const m = said.match(pattern);
    if (m) return { text: sentence(`${label} ${words(m)}`), field };
  }
  return { text: `${sentence(label).slice(0, -1)}: ${said}`, field };
}

/** "field: validator text; other: …" → sentences, and the first field named (to mark it). */
export function plainValidation(msg) {
  // "; " also occurs inside one message: split only where the next field's name follows.
  const parts = String(msg).split(/; (?=[A-Za-z_][\w.]*: )/).map(plainPart);
  return { text: parts.map((p) => p.text).join(' '), field: parts.find((p) => p.field)?.field ?? null };
}

// After a read's 429 the service says when the budget has room again (Retry-After). Until then
// reads are not sent at all: each one would be refused and spend nothing but more refusals.
// Writes still go, since a user pressed a button and should see the service's own answer; and a
// write's 429 pauses nothing, since it may be that action's own limit (feedback: 10 an hour),
// which says nothing about reading.
let readsPausedUntil = 0;

function pausedRead() {
  const wait = Math.ceil((readsPausedUntil - Date.now()) / 1000);
  if (wait <= 0) return null;
  return new ApiError(429, 'rate_limited', `Too many requests from this session; reading again in ${wait} s.`, wait);
}

export function cookie(name) {
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return '';
}

// Set while the page is going away on purpose (signing out): a refresh that meets the ended
// session then must not redirect somewhere else first.
let leaving = false;

/** From now on (or until `false`), a 401 does not redirect: the page is leaving by itself. */
export function holdRedirects(on = true) {
  leaving = on;
}

/** Go to `url`; requests still in flight no longer redirect on 401. */
export function leave(url) {
  leaving = true;
  location.assign(url);
}

export function loginUrl() {
  const here = location.pathname + location.search;
  return `/login?next=${encodeURIComponent(here)}`;
}

export async function api(method, path, body, { on401 = 'redirect' } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = cookie('csrf_token');
  const paused = method === 'GET' ? pausedRead() : null;
  if (paused) throw paused;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', 'The service cannot be reached. Check your connection.');
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.status === 401 && on401 === 'redirect') {
    if (!leaving) leave(loginUrl());
    throw new ApiError(401, 'unauthenticated', 'Your session has ended. Please sign in again.');
  }
  if (!response.ok) {
    const msg = data?.msg || `Request failed (${response.status}).`;
    let retryAfter = null;
    if (response.status === 429) {
      retryAfter = Math.max(1, Number(response.headers.get('Retry-After')) || 5);
      if (method === 'GET') readsPausedUntil = Math.max(readsPausedUntil, Date.now() + retryAfter * 1000);
    }
    if (data?.error === 'validation_error') {
      const plain = plainValidation(msg);
      throw new ApiError(response.status, data.error, plain.text, retryAfter, plain.field);
    }
    throw new ApiError(response.status, data?.error || 'error', msg, retryAfter);
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body ?? {}, opts);
export const patch = (path, body, opts) => api('PATCH', path, body, opts);
export const del = (path, opts) => api('DELETE', path, undefined, opts);
