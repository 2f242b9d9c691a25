"""Strategies: DSL and Python sources, versions, self-backtests, live deployments, signals."""
