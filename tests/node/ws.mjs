// The `binance` npm package's WebsocketClient, unmodified, pointed at the service by `wsUrl`:
// the USD-M user data stream, a mark price and a diff depth stream; a market order placed
// through its USDMClient. Every message received is printed as one JSON array at the end.
// Usage: node ws.mjs <base URL> <API key> <API secret>
import { USDMClient, WebsocketClient } from 'binance';

const [baseUrl, apiKey, apiSecret] = process.argv.slice(2);
const wsUrl = baseUrl.replace('http', 'ws');
const silent = { trace() {}, info() {}, error(...args) { console.error(...args); } };
const client = new WebsocketClient(
  { api_key: apiKey, api_secret: apiSecret, wsUrl, restOptions: { baseUrl } },
  silent,
);
const rest = new USDMClient({ api_key: apiKey, api_secret: apiSecret, baseUrl });
const seen = [];
const has = (e) => seen.some((m) => (m.data ?? m).e === e);
client.on('message', (message) => seen.push(message));
client.on('exception', (error) => console.error('exception', JSON.stringify(error)));

const deadline = Date.now() + 20000;
async function until(test) {
  while (!test()) {
    if (Date.now() > deadline) throw new Error('timed out: ' + JSON.stringify(seen).slice(0, 2000));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

try {
  await client.subscribeUsdFuturesUserDataStream();
  await client.subscribeMarkPrice('BTCUSDT', 'usdm', 1000);
  await client.subscribeDiffBookDepth('BTCUSDT', 100, 'usdm');
  await until(() => has('markPriceUpdate') && has('depthUpdate'));
  await rest.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: 0.01 });
  await until(() => has('ACCOUNT_UPDATE'));
  console.log(JSON.stringify(seen));
} finally {
  client.closeAll(false);
  setTimeout(() => process.exit(0), 200);
}
