// The backtest's charts: equity, drawdown, and the price with a marker on every fill
// (lightweight-charts from npm, served from /static/vendor).

import {
  AreaSeries,
  CandlestickSeries,
  ColorType,
  createChart,
  createSeriesMarkers,
} from '/static/vendor/lightweight-charts/dist/lightweight-charts.standalone.production.mjs';
import { chartTime } from '../charts.js';

const css = getComputedStyle(document.documentElement);
const color = (name, fallback) => css.getPropertyValue(name).trim() || fallback;

function chartIn(el) {
  el.replaceChildren();
  return createChart(el, {
    autoSize: true,
    layout: {
      background: { type: ColorType.Solid, color: 'transparent' },
      textColor: color('--muted', '#8b98a8'),
      fontFamily: 'system-ui, sans-serif',
    },
    grid: { vertLines: { color: color('--grid', '#1f2630') }, horzLines: { color: color('--grid', '#1f2630') } },
    rightPriceScale: { borderVisible: false },
    timeScale: { borderVisible: false, timeVisible: true, secondsVisible: false },
    crosshair: { mode: 0 },
  });
}

/** [[ms, value], …] as a series' data, one point a second (the last one wins). */
function points(curve) {
  const bySecond = new Map();
  for (const [ms, value] of curve) bySecond.set(chartTime(ms), Number(value));
  return [...bySecond.entries()].sort((a, b) => a[0] - b[0]).map(([time, value]) => ({ time, value }));
}

let charts = [];

/** Remove the previous result's charts (a new result draws fresh ones). */
export function clearCharts() {
  for (const chart of charts) chart.remove();
  charts = [];
}

export function curveChart(el, curve, { negative = false } = {}) {
  const chart = chartIn(el);
  charts.push(chart);
  const line = negative ? color('--down', '#f0616d') : color('--accent', '#4c8dff');
  const series = chart.addSeries(AreaSeries, {
    lineColor: line,
    topColor: negative ? 'rgba(240, 97, 109, 0.05)' : 'rgba(76, 141, 255, 0.35)',
    bottomColor: negative ? 'rgba(240, 97, 109, 0.35)' : 'rgba(76, 141, 255, 0.02)',
    invertFilledArea: negative,
    lineWidth: 2,
    priceFormat: { type: 'price', precision: 2, minMove: 0.01 },
  });
  series.setData(points(curve));
  chart.timeScale().fitContent();
  return chart;
}

export const INTERVALS = ['1m', '5m', '15m', '30m', '1h', '4h', '1d'];
export const STEP_MS = { '1m': 60e3, '5m': 300e3, '15m': 900e3, '30m': 1800e3, '1h': 3600e3, '4h': 14400e3, '1d': 86400e3 };
const PAGE = 1500; // candles in one read of GET /v1/market/klines
const EDGE = 40; // a page more is read when the view comes this close (in candles) to an end
const msOf = (time) => (time - chartTime(0)) * 1000;

/**
 * The backtest's price over its whole period, as a trading screen browses it: candles with an
 * arrow at each fill (up below the bar for a buy, down above it for a sell), read a page of
 * 1,500 at a time as the view is dragged or zoomed towards an end, in any interval from the
 * run's own up to 1d. `overview()` shows the whole period at the finest interval whose candles
 * fit the chart's width; `focus(ms)` shows the run's own candles around a moment.
 *
 * read({ interval, start, end, limit }) → klines; onView({ interval, from, to, loading })
 * says what is on screen (ms).
 */
export function periodChart(el, { timeframe, startMs, endMs, fills, read, onView = () => {} }) {
  const chart = chartIn(el);
  charts.push(chart);
  const series = chart.addSeries(CandlestickSeries, {
    upColor: color('--up', '#2ebd85'),
    downColor: color('--down', '#f0616d'),
    wickUpColor: color('--up', '#2ebd85'),
    wickDownColor: color('--down', '#f0616d'),
    borderVisible: false,
  });
  // Nothing follows the period's last candle: the view stops there (and zooms out leftwards).
  chart.applyOptions({ timeScale: { fixRightEdge: true } });
  const markers = createSeriesMarkers(series, []);
  const fillTimes = fills
    .map((f) => ({ ms: Number(f.time), buy: Number(f.qty) > 0 }))
    .sort((a, b) => a.ms - b.ms);
  const choices = INTERVALS.slice(Math.max(0, INTERVALS.indexOf(timeframe)));
  let interval = choices[0];
  let step = STEP_MS[interval];
  let bars = [];
  let generation = 0; // a newer show() makes older reads' answers stale
  let pending = null;
  let ends = { older: false, newer: false };

  const firstOpen = () => Math.floor(startMs / step) * step;
  const pastEnd = () => Math.ceil(endMs / step) * step; // the open after the last candle
  const toBar = (k) => ({
    time: chartTime(k.open_time),
    open: Number(k.open),
    high: Number(k.high),
    low: Number(k.low),
    close: Number(k.close),
  });

  async function candles(from, to) {
    const rows = await read({ interval, start: from, end: to - 1, limit: PAGE });
    return rows.filter((k) => k.open_time >= from && k.open_time < to).map(toBar);
  }

  function view() {
    const range = chart.timeScale().getVisibleRange();
    if (!range) return;
    const last = bars.length ? bars[bars.length - 1].time : range.to;
    onView({
      interval,
      from: Math.max(msOf(range.from), startMs),
      to: Math.min(msOf(Math.min(range.to, last)) + step, endMs),
      loading: Boolean(pending),
    });
  }

  /** Candles and markers; `shift` (candles added before the first) keeps the view on the same
   * candles, which the library would otherwise keep at the same distance from the last one. */
  function draw(shift = null) {
    const range = chart.timeScale().getVisibleLogicalRange();
    series.setData(bars);
    const times = bars.map((b) => b.time);
    const first = times.length ? times[0] : 0;
    const last = times.length ? times[times.length - 1] + step / 1000 : 0;
    // A marker sits on a candle: each fill on the candle it happened in.
    const candleOf = (t) => {
      let lo = 0;
      let hi = times.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (times[mid] <= t) lo = mid;
        else hi = mid - 1;
      }
      return times[lo];
    };
    markers.setMarkers(fillTimes
      .map((f) => ({ ...f, t: chartTime(f.ms) }))
      .filter((f) => f.t >= first && f.t < last)
      .map((f) => ({
        time: candleOf(f.t),
        position: f.buy ? 'belowBar' : 'aboveBar',
        color: f.buy ? color('--up', '#2ebd85') : color('--down', '#f0616d'),
        shape: f.buy ? 'arrowUp' : 'arrowDown',
        // letters only on the run's own candles: on coarser ones they would cover the price
        text: interval === choices[0] ? (f.buy ? 'B' : 'S') : '',
      })));
    if (range && shift !== null) chart.timeScale().setVisibleLogicalRange({ from: range.from + shift, to: range.to + shift });
  }

  /** One more page before the first candle read (older) or after the last (newer). */
  function more(side) {
    if (pending || ends[side] || !bars.length) return;
    const mine = generation;
    const older = side === 'older';
    const edge = msOf(older ? bars[0].time : bars[bars.length - 1].time);
    const from = older ? Math.max(firstOpen(), edge - PAGE * step) : edge + step;
    const to = older ? edge : Math.min(pastEnd(), edge + step + PAGE * step);
    if (to <= from) {
      ends[side] = true;
      return;
    }
    pending = candles(from, to).then((got) => {
      if (mine !== generation) return;
      const fresh = older
        ? got.filter((b) => b.time < bars[0].time)
        : got.filter((b) => b.time > bars[bars.length - 1].time);
      if (!fresh.length) ends[side] = true;
      bars = older ? fresh.concat(bars) : bars.concat(fresh);
      draw(older ? fresh.length : 0);
    }).catch(() => {
      if (mine === generation) ends[side] = true;
    }).finally(() => {
      pending = null;
      view();
    });
    view();
  }

  chart.timeScale().subscribeVisibleLogicalRangeChange((range) => {
    if (!range || !bars.length) return;
    if (range.from < EDGE) more('older');
    else if (range.to > bars.length - 1 - EDGE) more('newer');
    view();
  });

  /** Read the page of `to` candles around `centre` (the whole period when it fits in one). */
  async function show(next, centre, visibleBars) {
    generation += 1;
    const mine = generation;
    interval = next;
    step = STEP_MS[next];
    let from = Math.max(firstOpen(), Math.floor((centre - (PAGE / 2) * step) / step) * step);
    const to = Math.min(pastEnd(), from + PAGE * step);
    from = Math.max(firstOpen(), to - PAGE * step);
    const got = await candles(from, to);
    if (mine !== generation) return false;
    bars = got;
    ends = { older: from <= firstOpen(), newer: to >= pastEnd() };
    pending = null;
    draw();
    if (!visibleBars || visibleBars >= bars.length) chart.timeScale().fitContent();
    else {
      const at = Math.max(0, bars.findIndex((b) => b.time >= chartTime(centre)));
      chart.timeScale().setVisibleLogicalRange({ from: at - visibleBars / 2, to: at + visibleBars / 2 });
    }
    view();
    return true;
  }

  /** Candles the chart shows side by side at one pixel or more each. */
  const room = () => Math.max(60, (el.clientWidth || 600) - 70);
  const count = (iv) => Math.ceil((endMs - startMs) / STEP_MS[iv]);

  return {
    chart,
    intervals: choices,
    get interval() {
      return interval;
    },
    /** The whole period at the finest interval that fits (else the coarsest, paged). */
    overviewInterval() {
      return choices.find((iv) => count(iv) <= Math.min(PAGE, room())) || choices[choices.length - 1];
    },
    overview() {
      const iv = this.overviewInterval();
      return show(iv, (startMs + endMs) / 2, count(iv) <= PAGE ? 0 : room());
    },
    /** Another interval, around the middle of what is on screen now. */
    setInterval(next) {
      const range = chart.timeScale().getVisibleRange();
      const centre = range ? (msOf(range.from) + msOf(range.to)) / 2 : (startMs + endMs) / 2;
      const span = range ? msOf(range.to) - msOf(range.from) : endMs - startMs;
      const fits = Math.ceil(span / STEP_MS[next]);
      return show(next, centre, fits <= room() ? fits : Math.min(room() / 4, 240));
    },
    /** The run's own candles around `ms` (a trade's entry), a few hours either side. */
    focus(ms) {
      return show(choices[0], Number(ms), Math.min(room() / 4, 120));
    },
  };
}
