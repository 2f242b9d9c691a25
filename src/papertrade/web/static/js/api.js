// The one way the app talks to the service: same-origin fetch of the native /v1 API with the
// session cookie. Writes carry the csrf_token cookie's value in X-CSRF-Token.

export class ApiError extends Error {
  /** `retryAfter`: seconds the service asked us to wait (a 429's Retry-After), else null. */
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

// After a 429 the service says when the budget has room again (Retry-After). Until then reads
// are not sent at all: each one would be refused and spend nothing but more refusals. Writes
// still go, since a user pressed a button and should see the service's own answer.
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
      readsPausedUntil = Math.max(readsPausedUntil, Date.now() + retryAfter * 1000);
    }
    throw new ApiError(response.status, data?.error || 'error', msg, retryAfter);
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body ?? {}, opts);
export const patch = (path, body, opts) => api('PATCH', path, body, opts);
export const del = (path, opts) => api('DELETE', path, undefined, opts);
