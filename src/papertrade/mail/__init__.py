"""Email: outbound mail over SMTP, account verification and password reset, unsubscribing."""
