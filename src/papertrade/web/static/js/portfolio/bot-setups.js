// "Connect a bot" in the API Keys panel: ready-to-copy setups for ccxt, python-binance, freqtrade
// and a TradingView alert, with this server's public URL and the chosen key pair filled in.
// The key itself is stored hashed, so it is filled in only for a pair created on this page
// (then and there); the secret never: a placeholder says where to paste it. The URL tables are
// the ones docs/fapi.md gives and the test suite runs (tests/web/test_bot_setups.py runs the
// ccxt and python-binance setups taken from the page against a live server).

import { $, $$, h } from '../dom.js';
import { tabs } from '../ui.js';

export const SECRET_PLACEHOLDER = 'PASTE_YOUR_API_SECRET_HERE';
export const KEY_PLACEHOLDER = 'PASTE_YOUR_API_KEY_HERE';
const TOKEN_PLACEHOLDER = 'PASTE_YOUR_WEBHOOK_TOKEN_HERE';
// Every futures URL ccxt uses, v3 included (docs/fapi.md: otherwise signed calls go to Binance).
const CCXT_URLS = [
  ['fapiPublic', 'v1'], ['fapiPublicV2', 'v2'], ['fapiPublicV3', 'v3'],
  ['fapiPrivate', 'v1'], ['fapiPrivateV2', 'v2'], ['fapiPrivateV3', 'v3'],
];

function pythonHead(base, key) {
  let keyLine = `API_KEY = "${KEY_PLACEHOLDER}"`;
  if (key.full) keyLine = `API_KEY = "${key.full}"`;
  else if (key.prefix) keyLine += `  # starts with ${key.prefix}`;
  return [
    `BASE_URL = "${base}"`,
    '# The key pair from the API Keys panel (shown once, when created).',
    keyLine,
    `API_SECRET = "${SECRET_PLACEHOLDER}"`,
  ].join('\n');
}

export function ccxtSnippet(base, key) {
  const urls = CCXT_URLS.map(([name, v]) => `        "${name}": f"{BASE_URL}/fapi/${v}",`).join('\n');
  return `import ccxt  # pip install ccxt

${pythonHead(base, key)}

exchange = ccxt.binanceusdm({
    "apiKey": API_KEY,
    "secret": API_SECRET,
    "urls": {"api": {
${urls}
    }},
    "options": {"fetchCurrencies": False},
})
exchange.load_markets()
print(exchange.fetch_balance()["USDT"])
# exchange.create_order("BTC/USDT:USDT", "market", "buy", 0.002)
`;
}

export function pythonBinanceSnippet(base, key) {
  return `from binance.client import Client  # pip install python-binance

${pythonHead(base, key)}

client = Client(API_KEY, API_SECRET, ping=False)  # ping=False: no call to Binance itself
client.FUTURES_URL = f"{BASE_URL}/fapi"  # after construction, without /v1 (the client adds it)
print(client.futures_account_balance())
# client.futures_create_order(symbol="BTCUSDT", side="BUY", type="MARKET", quantity=0.002)
`;
}

export function freqtradeSnippet(base, key) {
  const ccxt = {
    urls: { api: Object.fromEntries(CCXT_URLS.map(([name, v]) => [name, `${base}/fapi/${v}`])) },
    options: { fetchCurrencies: false, fetchMarkets: { types: ['linear'] } },
  };
  return `${JSON.stringify({
    trading_mode: 'futures',
    margin_mode: 'isolated',
    stake_currency: 'USDT',
    entry_pricing: { price_side: 'other', use_order_book: true, order_book_top: 1 },
    exit_pricing: { price_side: 'other', use_order_book: true, order_book_top: 1 },
    exchange: {
      name: 'binance',
      key: key.full || KEY_PLACEHOLDER,
      secret: SECRET_PLACEHOLDER,
      only_from_ccxt: true,
      ccxt_config: ccxt,
      ccxt_async_config: ccxt,
      pair_whitelist: ['BTC/USDT:USDT'],
    },
  }, null, 2)}\n`;
}

export function tradingViewUrl(base, webhookUrl) {
  return webhookUrl || `${base}/webhook/tv/${TOKEN_PLACEHOLDER}`;
}

/**
 * Wire the "Connect a bot" box; returns what the key and webhook lists call back. `message` is
 * the TradingView alert message of the Webhook panel.
 */
export function setupBotSetups(root, message) {
  const box = $('#bot-setups', root);
  const base = box.dataset.baseUrl;
  const select = $('#bot-key', box);
  let keys = []; // {id, prefix, note, full?}
  const full = new Map(); // key id → the full key, for pairs created on this page
  let webhookUrl = null;

  function render() {
    const chosen = keys.find((k) => String(k.id) === select.value);
    const key = chosen ? { prefix: chosen.prefix, full: full.get(chosen.id) } : {};
    $('#bot-ccxt-code', box).value = ccxtSnippet(base, key);
    $('#bot-binance-code', box).value = pythonBinanceSnippet(base, key);
    $('#bot-freqtrade-code', box).value = freqtradeSnippet(base, key);
    $('#bot-tv-url', box).value = tradingViewUrl(base, webhookUrl);
    $('#bot-tv-message', box).value = message;
    $('#bot-key-note', box).textContent = !chosen
      ? 'Create a key pair above first; the setups then name it.'
      : key.full
        ? `Key ${chosen.prefix}… is filled in. Paste its secret where ${SECRET_PLACEHOLDER} stands: it is shown only once, above.`
        : `Keys are stored hashed, so only a pair created here just now is filled in: paste the full key ${chosen.prefix}… and its secret where the placeholders stand.`;
  }

  select.addEventListener('change', render);
  tabs($('[role="tablist"]', box));
  for (const area of $$('textarea', box)) area.addEventListener('focus', () => area.select());

  render();
  return {
    /** The portfolio's key pairs (GET …/api-keys); `created` is a pair just made on this page. */
    setKeys(rows, created) {
      if (created) full.set(created.id, created.api_key);
      keys = rows.filter((k) => !k.revoked_at);
      const previous = select.value;
      select.replaceChildren(...keys.map((k) => h('option', { value: k.id },
        `${k.prefix}…${k.note ? ` (${k.note})` : ''}`)));
      select.disabled = keys.length === 0;
      const wanted = created ? String(created.id) : previous;
      if (keys.some((k) => String(k.id) === wanted)) select.value = wanted;
      render();
    },
    setWebhookUrl(url) {
      webhookUrl = url;
      render();
    },
  };
}
