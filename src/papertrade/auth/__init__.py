"""Who is calling: one principal type, resolved by one authentication layer per surface."""
