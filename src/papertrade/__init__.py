"""Papertrade: a paper-trading service for USDT-margined perpetual futures."""

__version__ = "0.1.0"
