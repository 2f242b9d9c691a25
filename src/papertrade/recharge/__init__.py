"""USDT-TRC20 recharge: orders with a unique pay amount, a TronGrid watcher, operator review."""
