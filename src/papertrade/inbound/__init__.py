"""Inbound third-party webhooks: one framework (raw body kept, credential checked before
parsing, durable insert, fast answer, background processing, de-duplication, per-source rate
limits, history with outcomes) and its sources: the email provider (Resend) and Finnhub."""
