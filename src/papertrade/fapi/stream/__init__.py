"""Binance-compatible WebSocket streams: user data (listenKey) and market data (docs/fapi-ws.md)."""
