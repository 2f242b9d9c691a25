// The `binance` npm package's USDMClient, unmodified, pointed at the service: one trading
// session's calls, each outcome printed as one JSON object for the Python test to check.
// Usage: node usdm.mjs <base URL> <API key> <API secret>
import { USDMClient } from 'binance';

const [baseUrl, apiKey, apiSecret] = process.argv.slice(2);
const client = new USDMClient({ api_key: apiKey, api_secret: apiSecret, baseUrl });
const seen = {};

async function call(name, fn) {
  try {
    seen[name] = { ok: await fn() };
  } catch (error) {
    seen[name] = { error: error?.body ?? String(error?.message ?? error) };
  }
}

await call('ping', () => client.testConnectivity());
await call('symbols', async () => (await client.getExchangeInfo()).symbols.map((s) => s.symbol));
await call('markPrice', () => client.getMarkPrice({ symbol: 'BTCUSDT' }));
await call('balance', () => client.getBalanceV3());
await call('leverage', () => client.setLeverage({ symbol: 'BTCUSDT', leverage: 10 }));
await call('market', () =>
  client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: 0.01 }),
);
await call('limit', () =>
  client.submitNewOrder({
    symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: 0.01, price: 50000, timeInForce: 'GTC',
  }),
);
await call('stop', () =>
  client.submitNewAlgoOrder({
    algoType: 'CONDITIONAL', symbol: 'BTCUSDT', side: 'SELL', type: 'STOP_MARKET',
    triggerPrice: 40000, closePosition: 'true',
  }),
);
await call('openOrders', () => client.getAllOpenOrders({ symbol: 'BTCUSDT' }));
await call('positions', () => client.getPositionsV3({ symbol: 'BTCUSDT' }));
await call('cancelAll', () => client.cancelAllOpenOrders({ symbol: 'BTCUSDT' }));
await call('allOrders', () => client.getAllOrders({ symbol: 'BTCUSDT' }));
await call('trades', () => client.getAccountTrades({ symbol: 'BTCUSDT' }));
await call('income', () => client.getIncomeHistory({}));
await call('liquidations', () => client.getForceOrders({}));
await call('fundingInfo', () => client.getFundingRates());
await call('tooMuch', () =>
  client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: 100 }),
);
console.log(JSON.stringify(seen));
