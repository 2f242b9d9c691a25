// Follow a backtest (or drift report) until it is done. The REST poll is the source of truth and
// always runs; when the WebSocket carries progress for it (a `backtest.progress` message on the
// caller's `backtests` channel, data {backtest_id, status, progress, progress_text}), the bar
// moves from those messages and the poll slows down. Either path alone is enough, so the page
// works with or without that channel on the server (without it, subscribing is refused with
// an error message on the socket, which changes nothing).

import { get } from '../api.js';
import { connectLive } from '../live.js';

const FAST_MS = 700;
const SLOW_MS = 3000;

function pushed(message, backtestId) {
  const data = message?.data && typeof message.data === 'object' ? message.data : message;
  const id = Number(data?.backtest_id ?? data?.id);
  if (id !== backtestId || typeof data.progress !== 'number') return null;
  return data;
}

/**
 * Calls `onUpdate({status, progress (0–1), progress_text, …})` as the run advances; resolves
 * with the final GET …/backtests/{id} (status done or failed).
 */
export function watchBacktest(strategyId, backtestId, onUpdate) {
  return new Promise((resolve, reject) => {
    let finished = false;
    let lastPush = 0;
    let timer = null;
    const path = `/v1/strategies/${strategyId}/backtests/${backtestId}`;
    const poll = async () => {
      clearTimeout(timer);
      if (finished) return;
      let detail;
      try {
        detail = await get(path);
      } catch (error) {
        if (error.status === 404 || error.status === 401) {
          finish();
          reject(error);
          return;
        }
        if (!finished) timer = setTimeout(poll, Math.max(SLOW_MS, (error.retryAfter ?? 0) * 1000));
        return;
      }
      // A push can start a second poll while this one waits; whichever answers first with the
      // end resolves, and a later answer (older, perhaps still "running") must not undo it.
      if (finished) return;
      onUpdate(detail);
      if (detail.status === 'done' || detail.status === 'failed') {
        finish();
        resolve(detail);
        return;
      }
      const streaming = Date.now() - lastPush < SLOW_MS;
      timer = setTimeout(poll, streaming ? SLOW_MS : FAST_MS);
    };
    const live = connectLive(['backtests'], (message) => {
      const data = pushed(message, backtestId);
      if (!data || finished) return;
      lastPush = Date.now();
      onUpdate(data);
      if (data.status === 'done' || data.status === 'failed') poll();
    });
    const finish = () => {
      finished = true;
      clearTimeout(timer);
      live.close();
    };
    poll();
  });
}
