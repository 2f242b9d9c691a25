"""Which new passwords are refused: length, and the commonly used ones (NIST SP 800-63B 3.1.1.2).

NIST asks to compare new passwords with a list of commonly used or compromised ones, with
repetitive or sequential characters and with context words (the service's name, the user's
email), rather than to impose composition rules. zxcvbn does exactly this comparison: it matches
the password against its list of the 30,000 most common passwords (from Mark Burnett's corpus of
ten million leaked passwords) and dictionaries, including variations (capitals, l33t
substitutions, reversal, digits appended), keyboard patterns, repeats, sequences and dates, and
estimates how many guesses it takes. A password found within MIN_GUESSES guesses is refused.
"""

from zxcvbn import zxcvbn

MIN_LENGTH = 8
MAX_LENGTH = 256
# Sign-in throttling (users/throttle.py) lets one account be tried about 4,800 times a day from
# many addresses at once; 100,000 guesses then take three weeks. The most common passwords and
# their simple variations fall far below this, long passphrases far above.
MIN_GUESSES = 100_000
# zxcvbn's matching grows quickly with length; a longer password is judged by its beginning.
CHECKED_PREFIX = 72
CONTEXT_WORDS = ("papertrade", "paper", "trade", "trading")


def too_common(password: str, email: str | None = None) -> bool:
    """True when `password` is a commonly used password or a simple variation of one."""
    words = list(CONTEXT_WORDS)
    if email:
        words += [email, email.partition("@")[0]]
    estimate = zxcvbn(password[:CHECKED_PREFIX], user_inputs=words)
    return bool(estimate["guesses"] < MIN_GUESSES)
