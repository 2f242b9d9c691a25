// Charts with TradingView's lightweight-charts (npm, pinned; served from /static/vendor).

import {
  AreaSeries,
  CandlestickSeries,
  ColorType,
  HistogramSeries,
  LineStyle,
  createChart,
  createSeriesMarkers,
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
      // Credited in the page footer (base.html), so the logo never covers the line.
      attributionLogo: false,
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
    series,
    setTick,
    setKlines(rows) {
      const bars = rows.map(bar);
      series.setData(bars);
      lastTime = bars.length ? bars[bars.length - 1].time : 0;
      chart.timeScale().scrollToRealTime();
    },
    /** Update the last candle or append a newer one (older ones cannot change: a late update
     * for an earlier bar is dropped, and false says so). */
    update(kline) {
      const next = bar(kline);
      if (next.time < lastTime) return false;
      series.update(next);
      lastTime = next.time;
      return true;
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
    // A flat curve would otherwise fill the plot with cent-sized wiggles: show at least ±0.5 %
    // of the equity around it.
    autoscaleInfoProvider: (original) => {
      const found = original();
      if (!found?.priceRange) return found;
      const { minValue, maxValue } = found.priceRange;
      const middle = (minValue + maxValue) / 2;
      const half = Math.max((maxValue - minValue) / 2, Math.abs(middle) * 0.005, 0.01);
      return { ...found, priceRange: { minValue: middle - half, maxValue: middle + half } };
    },
  });
  let lastTime = 0;
  // The whole curve across the chart, also when it was drawn while hidden (a tab not yet
  // opened has no width: fitting it then squeezed the curve against the right edge once shown)
  // and after the page is resized.
  chart.timeScale().subscribeSizeChange((width) => {
    if (width > 0) chart.timeScale().fitContent();
  });
  return {
    chart,
    /** points: [{time: ms, equity: number}], any order; duplicates by second keep the last. */
    setPoints(points) {
      const bySecond = new Map();
      for (const p of points) bySecond.set(chartTime(p.time), Number(p.equity));
      const data = [...bySecond.entries()].sort((a, b) => a[0] - b[0]).map(([time, value]) => ({ time, value }));
      series.setData(data);
      lastTime = data.length ? data[data.length - 1].time : 0;
      // Seconds on the axis only when the whole curve spans less than an hour; otherwise
      // neighbouring labels would repeat the same minute.
      const span = data.length > 1 ? data[data.length - 1].time - data[0].time : 0;
      chart.applyOptions({ timeScale: { secondsVisible: span > 0 && span < 3600 } });
      chart.timeScale().fitContent();
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

const MARKER_UP = () => color('--up', '#2ebd85');
const MARKER_DOWN = () => color('--down', '#f0616d');

/** Candles with volume below them, fill markers and price lines (orders, entry, TP/SL,
 * liquidation): the portfolio page's chart. */
export function tradeChart(el, { tick = 0.01 } = {}) {
  const candles = candleChart(el, { tick });
  const { chart } = candles;
  const volume = chart.addSeries(HistogramSeries, {
    priceFormat: { type: 'volume' },
    priceScaleId: 'volume',
    color: 'rgba(139, 152, 168, 0.35)',
  });
  chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.82, bottom: 0 } });
  chart.priceScale('right').applyOptions({ scaleMargins: { top: 0.08, bottom: 0.22 } });
  const { series } = candles;
  const markers = createSeriesMarkers(series, []);
  let lines = [];
  const bar = (k) => ({
    time: chartTime(k.open_time),
    value: Number(k.volume),
    color: Number(k.close) >= Number(k.open) ? 'rgba(46, 189, 133, 0.4)' : 'rgba(240, 97, 109, 0.4)',
  });
  return {
    chart,
    setTick: candles.setTick,
    setKlines(rows) {
      candles.setKlines(rows);
      volume.setData(rows.map(bar));
    },
    update(kline) {
      // The volume series refuses an older bar just as the candles do (a thrown error).
      if (candles.update(kline)) volume.update(bar(kline));
    },
    /** fills: [{time: ms, side: 'buy'|'sell', price, quantity, text}] */
    setFills(fills) {
      const sorted = [...fills].sort((a, b) => a.time - b.time);
      markers.setMarkers(sorted.map((f) => ({
        time: chartTime(f.time),
        position: f.side === 'buy' ? 'belowBar' : 'aboveBar',
        shape: f.side === 'buy' ? 'arrowUp' : 'arrowDown',
        color: f.side === 'buy' ? MARKER_UP() : MARKER_DOWN(),
        text: f.text,
      })));
    },
    /** lines: [{price, title, kind: 'order'|'entry'|'tp'|'sl'|'liq'}] */
    setLines(next) {
      for (const line of lines) series.removePriceLine(line);
      const styles = {
        order: [color('--accent', '#4c8dff'), LineStyle.Dashed],
        entry: [color('--text', '#e6edf3'), LineStyle.Solid],
        tp: [MARKER_UP(), LineStyle.Dotted],
        sl: [MARKER_DOWN(), LineStyle.Dotted],
        liq: [color('--warn', '#e3b341'), LineStyle.LargeDashed],
      };
      lines = next.map((l) => {
        const [lineColor, lineStyle] = styles[l.kind] || styles.order;
        return series.createPriceLine({
          price: Number(l.price), color: lineColor, lineStyle, lineWidth: 1,
          axisLabelVisible: true, title: l.title,
        });
      });
    },
  };
}
