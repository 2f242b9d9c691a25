// Charts with TradingView's lightweight-charts (npm, pinned; served from /static/vendor).

import {
  AreaSeries,
  CandlestickSeries,
  ColorType,
  createChart,
} from '/static/vendor/lightweight-charts/dist/lightweight-charts.standalone.production.mjs';

const css = getComputedStyle(document.documentElement);
const color = (name, fallback) => css.getPropertyValue(name).trim() || fallback;

// The library draws in UTC; shift by the browser's offset so axes read in local time.
const OFFSET_S = -new Date().getTimezoneOffset() * 60;
export const chartTime = (ms) => Math.floor(Number(ms) / 1000) + OFFSET_S;

function baseChart(el) {
  return createChart(el, {
    autoSize: true,
    layout: {
      background: { type: ColorType.Solid, color: 'transparent' },
      textColor: color('--muted', '#8b949e'),
      fontFamily: 'system-ui, sans-serif',
      attributionLogo: true,
    },
    grid: {
      vertLines: { color: color('--grid', '#1f2630') },
      horzLines: { color: color('--grid', '#1f2630') },
    },
    rightPriceScale: { borderVisible: false },
    timeScale: { borderVisible: false, timeVisible: true, secondsVisible: false },
    crosshair: { mode: 0 },
  });
}

export function candleChart(el, { tick = 0.01 } = {}) {
  const chart = baseChart(el);
  const series = chart.addSeries(CandlestickSeries, {
    upColor: color('--up', '#26a69a'),
    downColor: color('--down', '#ef5350'),
    wickUpColor: color('--up', '#26a69a'),
    wickDownColor: color('--down', '#ef5350'),
    borderVisible: false,
  });
  const setTick = (step) => {
    const precision = Math.max(0, Math.min(10, Math.round(-Math.log10(Number(step) || 0.01))));
    series.applyOptions({ priceFormat: { type: 'price', precision, minMove: Number(step) } });
  };
  setTick(tick);
  const bar = (k) => ({
    time: chartTime(k.open_time),
    open: Number(k.open),
    high: Number(k.high),
    low: Number(k.low),
    close: Number(k.close),
  });
  let lastTime = 0;
  return {
    chart,
    setTick,
    setKlines(rows) {
      const bars = rows.map(bar);
      series.setData(bars);
      lastTime = bars.length ? bars[bars.length - 1].time : 0;
      chart.timeScale().scrollToRealTime();
    },
    /** Update the last candle or append a newer one (older ones cannot change). */
    update(kline) {
      const next = bar(kline);
      if (next.time < lastTime) return;
      series.update(next);
      lastTime = next.time;
    },
  };
}

export function equityChart(el) {
  const chart = baseChart(el);
  const series = chart.addSeries(AreaSeries, {
    lineColor: color('--accent', '#4c8dff'),
    topColor: 'rgba(76, 141, 255, 0.35)',
    bottomColor: 'rgba(76, 141, 255, 0.02)',
    lineWidth: 2,
    priceFormat: { type: 'price', precision: 2, minMove: 0.01 },
  });
  let fitted = false;
  let lastTime = 0;
  return {
    chart,
    /** points: [{time: ms, equity: number}], any order; duplicates by second keep the last. */
    setPoints(points) {
      const bySecond = new Map();
      for (const p of points) bySecond.set(chartTime(p.time), Number(p.equity));
      const data = [...bySecond.entries()].sort((a, b) => a[0] - b[0]).map(([time, value]) => ({ time, value }));
      series.setData(data);
      lastTime = data.length ? data[data.length - 1].time : 0;
      if (!fitted) chart.timeScale().fitContent();
      fitted = true;
    },
    /** Append (or move) the live end of the curve without redrawing the rest. */
    addPoint(point) {
      const time = chartTime(point.time);
      if (time < lastTime) return;
      series.update({ time, value: Number(point.equity) });
      lastTime = time;
    },
  };
}
