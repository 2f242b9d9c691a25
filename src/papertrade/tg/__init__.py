"""Telegram: binding an account by deep link, the bot's webhook, and outbound messages."""
