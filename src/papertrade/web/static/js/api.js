// The one way the app talks to the service: same-origin fetch of the native /v1 API with the
// session cookie. Writes carry the csrf_token cookie's value in X-CSRF-Token.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
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
    throw new ApiError(response.status, data?.error || 'error', msg);
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body ?? {}, opts);
export const patch = (path, body, opts) => api('PATCH', path, body, opts);
export const del = (path, opts) => api('DELETE', path, undefined, opts);
