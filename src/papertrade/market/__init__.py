"""Market data: instruments, quotes, klines, from Binance, a seeded simulation or replay files."""
