"""A user's profile (display name, bio, time zone, locale, avatar), password and account."""
