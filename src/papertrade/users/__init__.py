"""Users: sign-up, sign-in, sessions and the profile."""
