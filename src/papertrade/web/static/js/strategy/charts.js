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

/**
 * Candles with an arrow at each fill: up below the bar for a buy, down above it for a sell.
 * Fills outside the candles shown (a period longer than one read) are left out.
 */
export function priceChart(el, klines, fills) {
  const chart = chartIn(el);
  charts.push(chart);
  const series = chart.addSeries(CandlestickSeries, {
    upColor: color('--up', '#2ebd85'),
    downColor: color('--down', '#f0616d'),
    wickUpColor: color('--up', '#2ebd85'),
    wickDownColor: color('--down', '#f0616d'),
    borderVisible: false,
  });
  const bars = klines.map((k) => ({
    time: chartTime(k.open_time),
    open: Number(k.open),
    high: Number(k.high),
    low: Number(k.low),
    close: Number(k.close),
  }));
  series.setData(bars);
  const first = bars.length ? bars[0].time : 0;
  const last = bars.length ? bars[bars.length - 1].time : 0;
  // A marker sits on a bar: put each fill on the bar it happened in.
  const times = bars.map((b) => b.time);
  const barOf = (t) => {
    let lo = 0;
    let hi = times.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (times[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return times[lo];
  };
  const markers = fills
    .map((f) => ({ ...f, t: chartTime(f.time) }))
    .filter((f) => f.t >= first && f.t <= last)
    .sort((a, b) => a.t - b.t)
    .map((f) => {
      const buy = Number(f.qty) > 0;
      return {
        time: barOf(f.t),
        position: buy ? 'belowBar' : 'aboveBar',
        color: buy ? color('--up', '#2ebd85') : color('--down', '#f0616d'),
        shape: buy ? 'arrowUp' : 'arrowDown',
        text: buy ? 'B' : 'S',
      };
    });
  createSeriesMarkers(series, markers);
  chart.timeScale().fitContent();
  return { chart, shown: markers.length };
}
