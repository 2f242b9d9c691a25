"""The Binance USD-M futures compatible surface: an adapter over the domain services."""
