// The tradable symbols (GET /v1/market/symbols, loaded once per page) and formatting of a
// symbol's prices and quantities with its own tick and step sizes.

import { get } from './api.js';
import { decimalsOf, num } from './format.js';

export const instruments = new Map();

let loading = null;

/** Resolves to the list of symbols once they are loaded. */
export function loadInstruments() {
  loading ??= get('/v1/market/symbols', { on401: 'throw' }).then((list) => {
    for (const s of list) instruments.set(s.symbol, s);
    return list;
  });
  return loading;
}

export function price(symbol, value) {
  const instrument = instruments.get(symbol);
  return num(value, instrument ? decimalsOf(instrument.tick_size) : undefined);
}

export function qty(symbol, value) {
  const instrument = instruments.get(symbol);
  return num(value, instrument ? decimalsOf(instrument.step_size) : undefined);
}
