// Live updates: the /v1/ws WebSocket (session cookie) when it is there, polling otherwise.
//
// Pages say what to refresh and which channels matter; a WebSocket event triggers a prompt
// (throttled) refresh through the REST API, which stays the one source of truth. While the
// socket is down the same refresh runs on a timer, so the page is live either way.

/** Run `fn` now and every `ms` while the tab is visible; never two runs at once. */
export function every(ms, fn) {
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
    try {
      await fn();
    } catch (error) {
      console.warn('refresh failed', error);
    } finally {
      running = false;
      timer = setTimeout(run, document.hidden ? Math.max(period, 15000) : period);
      if (again) {
        again = false;
        run();
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
 * The /v1/ws WebSocket of a signed-in page (the session cookie authenticates it; see
 * docs/websocket.md). Subscribes to `channels` (changeable with `setChannels`), hands every
 * channel message to `onEvent(message)` and tells `onState('open' | 'closed')`. It reconnects
 * with back-off, and gives up for good when the session is refused (the page's next REST call
 * then sends the user to sign in). Signed-out pages do not open it: they poll.
 */
export function connectLive(channels, onEvent, onState = () => {}) {
  const idle = { setChannels() {}, close() {} };
  if (!('WebSocket' in window) || !document.body.dataset.signedIn) return idle;
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
      } else if (message.channel) {
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
