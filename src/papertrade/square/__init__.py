"""The public square: public portfolios and their track-record statistics."""
