// Live updates: the /v1/ws WebSocket (session cookie) when it is there, polling otherwise.
//
// Pages say what to read and which channels matter. Messages that carry the new values (a
// position's mark and PnL, a signal) are applied in place; an event that changes the account
// triggers one coalesced re-read of the REST API, which stays the one source of truth. While the
// socket is down the same reads run on a timer, so the page is live either way; with it up the
// timer is only a slow safety net. A 429 is respected: nothing is read again before its
// Retry-After, and the page says its figures are stale (liveStatus).

/**
 * Run `fn` now and every `ms` while the tab is visible; never two runs at once. `onSettled(error)`
 * hears how each run went (null: fine). After a refusal with a Retry-After the next run waits
 * at least that long.
 */
export function every(ms, fn, onSettled = () => {}) {
  let timer = null;
  let running = false;
  let again = false;
  let period = ms;
  const run = async () => {
    clearTimeout(timer);
    if (running) {
      again = true;
      return;
    }
    running = true;
    let wait = 0;
    try {
      await fn();
      onSettled(null);
    } catch (error) {
      console.warn('refresh failed', error);
      wait = (error?.retryAfter ?? 0) * 1000;
      onSettled(error);
    } finally {
      running = false;
      timer = setTimeout(run, Math.max(wait, document.hidden ? Math.max(period, 15000) : period));
      if (again) {
        again = false;
        // Asked again while running: go once more, unless the service asked us to wait.
        if (!wait) run();
      }
    }
  };
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) run();
  });
  run();
  return {
    now: run,
    setPeriod(next) {
      period = next;
    },
  };
}

/** Call `fn` at most once per `ms`, the last call always going through. */
export function throttle(ms, fn) {
  let last = 0;
  let timer = null;
  return (...args) => {
    const wait = last + ms - Date.now();
    clearTimeout(timer);
    if (wait <= 0) {
      last = Date.now();
      fn(...args);
    } else {
      timer = setTimeout(() => {
        last = Date.now();
        fn(...args);
      }, wait);
    }
  };
}

/**
 * Call `fn` once, `ms` after the first of a burst of calls: the events of one order (new,
 * filled, position, balance) or of several fills arriving together cause a single re-read.
 */
export function coalesce(ms, fn) {
  let timer = null;
  return () => {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
}

const STALE_REASON = {
  rate_limited: 'Too many requests from this session',
  network: 'The service cannot be reached',
};

/**
 * The live dot and the stale-data note of a page. `track(name)` gives an `onSettled` for one of
 * the page's readers; the data is stale while any of them last failed. The dot is green only
 * when the socket streams and every read succeeded; amber ("polling") while the socket is down;
 * red ("stale") with the note saying why and when the page reads again while data is stale.
 */
export function liveStatus(dot, note) {
  const failures = new Map();
  let socketOpen = false;
  let ticker = null;

  const render = () => {
    const failure = [...failures.values()].find(Boolean);
    const state = failure ? 'stale' : socketOpen ? 'on' : 'polling';
    if (dot) {
      dot.className = `live-dot ${state}`;
      dot.textContent = { on: 'live', polling: 'polling', stale: 'stale' }[state];
      dot.title = {
        on: 'Live: streaming over WebSocket',
        polling: 'Live updates unavailable: refreshing on a timer',
        stale: 'The figures may be out of date',
      }[state];
    }
    clearInterval(ticker);
    ticker = null;
    if (!note) return;
    note.hidden = !failure;
    if (!failure) return;
    const reason = STALE_REASON[failure.error.code] || `Refreshing failed (${failure.error.message})`;
    const show = () => {
      const left = Math.ceil((failure.retryAt - Date.now()) / 1000);
      note.textContent = `${reason}: the figures shown may be out of date. ${left > 0 ? `Retrying in ${left} s.` : 'Retrying…'}`;
    };
    show();
    if (failure.retryAt > Date.now()) ticker = setInterval(show, 1000);
  };

  return {
    track(name) {
      return (error) => {
        const was = failures.get(name);
        if (!error && !was) return;
        failures.set(name, error ? { error, retryAt: Date.now() + (error.retryAfter ?? 0) * 1000 } : null);
        render();
      };
    },
    socket(open) {
      socketOpen = open;
      render();
    },
  };
}

/**
 * The /v1/ws WebSocket of a signed-in page (the session cookie authenticates it; see
 * docs/websocket.md). Subscribes to `channels` (changeable with `setChannels`), hands every
 * channel message (and the server's `resync` requests) to `onEvent(message)` and tells
 * `onState('open' | 'closed')`. It reconnects with back-off, and gives up for good when the
 * session is refused (the page's next REST call then sends the user to sign in). Signed-out pages
 * do not open it: they poll.
 */
export function connectLive(channels, onEvent, onState = () => {}) {
  const idle = { setChannels() {}, close() {} };
  if (!('WebSocket' in window) || !document.body.dataset.signedIn) {
    onState('closed'); // the page polls, and says so
    return idle;
  }
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/ws`;
  let wanted = new Set(channels);
  let subscribed = new Set();
  let socket = null;
  let stopped = false;
  let failures = 0;
  let watchdog = null;
  let heartbeatMs = 15000;

  const send = (message) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  };
  let ready = false; // welcomed and authenticated
  const sync = () => {
    if (!ready) return;
    const add = [...wanted].filter((c) => !subscribed.has(c));
    const drop = [...subscribed].filter((c) => !wanted.has(c));
    if (add.length) send({ op: 'subscribe', channels: add });
    if (drop.length) send({ op: 'unsubscribe', channels: drop });
    subscribed = new Set(wanted);
  };
  // No message (not even the server's heartbeat) for two heartbeats: the link is dead.
  const feed = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => socket?.close(), heartbeatMs * 2 + 5000);
  };

  const open = () => {
    if (stopped) return;
    socket = new WebSocket(url);
    subscribed = new Set();
    socket.addEventListener('message', (event) => {
      feed();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!message || typeof message !== 'object') return;
      if (message.type === 'welcome') {
        if (!message.authenticated) {
          stopped = true;
          socket.close();
          return;
        }
        heartbeatMs = Number(message.heartbeat_s || 15) * 1000;
        failures = 0;
        ready = true;
        sync();
        onState('open');
      } else if (message.type === 'error') {
        console.warn('live updates:', message.error, message.msg);
      } else if (message.channel || message.type === 'resync') {
        onEvent(message);
      }
    });
    socket.addEventListener('close', (event) => {
      clearTimeout(watchdog);
      ready = false;
      onState('closed');
      if ([4401, 4403, 4400].includes(event.code)) stopped = true;
      if (stopped) return;
      failures += 1;
      setTimeout(open, Math.min(30000, 1000 * 2 ** Math.min(failures, 5)));
    });
  };
  open();
  return {
    setChannels(next) {
      wanted = new Set(next);
      sync();
    },
    close() {
      stopped = true;
      socket?.close();
    },
  };
}
