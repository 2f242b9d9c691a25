"""Sign-in and sign-up throttling (README, Configuration; docs/errors.md, rate_limited).

A sign-in attempt is charged before the password is checked, so parallel guesses cannot slip
past a budget, and a successful one gives its charge back: only failures count. Budgets, in the
order they are charged (the first one spent refuses the attempt, and the later ones are not
charged for it):

1. one address trying one account: a handful of typos is nothing, a guessing run stops here;
2. one address trying any accounts: credential stuffing from one place;
3. one account from every address: a distributed guessing run. Since a refused attempt never
   reaches this budget, one address can spend at most its own share (1) of it, so someone
   hammering an account cannot lock its owner out; it takes several addresses to do so, and then
   only until the window ends.

An email with no account is budgeted like one that has an account: the answers must not tell
them apart. Sign-ups are counted per address (domain rules B9: 5 an hour).
"""

import hashlib
from dataclasses import dataclass

from papertrade.context import AppContext
from papertrade.errors import RateLimited
from papertrade.kit import ratelimit
from papertrade.kit.ratelimit import Charge

LOGIN_WINDOW_S = 15 * 60
SIGNUP_WINDOW_S = 3600


@dataclass(frozen=True, slots=True)
class Attempt:
    """A sign-in attempt that was charged; give it back if it succeeds."""

    charges: list[Charge]
    charged_at: float


def _account(email: str) -> str:
    # Budgets name the account by a digest: no email address ends up in Redis.
    return hashlib.sha256(email.encode()).hexdigest()[:32]


async def begin_sign_in(ctx: AppContext, email: str, address: str) -> Attempt:
    """Charge one attempt at `email` (normalised) from `address`, or refuse it with 429."""
    settings = ctx.settings
    account = _account(email)
    charges = [
        Charge(
            f"login:account-ip:{account}:{address}",
            settings.rate_limit_login_account_ip_per_15min,
            LOGIN_WINDOW_S,
        ),
        Charge(f"login:ip:{address}", settings.rate_limit_login_ip_per_15min, LOGIN_WINDOW_S),
        Charge(
            f"login:account:{account}", settings.rate_limit_login_account_per_15min, LOGIN_WINDOW_S
        ),
    ]
    charged_at = ratelimit.clock()  # the limiter's own clock: give_back finds the same window
    usages = await ctx.limiter.hit_all(charges)
    refused = usages[-1]
    if not refused.allowed:
        whose = "from your address" if len(usages) == 2 else "for this account"
        raise RateLimited(
            f"Too many failed sign-ins {whose}; retry in {refused.retry_after} s.",
            retry_after=refused.retry_after,
        )
    return Attempt(charges, charged_at)


async def signed_in(ctx: AppContext, attempt: Attempt) -> None:
    """The attempt succeeded: it does not count against any budget."""
    await ctx.limiter.give_back(attempt.charges, attempt.charged_at)


async def charge_sign_up(ctx: AppContext, address: str) -> None:
    """Charge one sign-up to `address`, or refuse it with 429."""
    limit = ctx.settings.rate_limit_signup_ip_per_hour
    usage = await ctx.limiter.hit(f"signup:ip:{address}", limit, SIGNUP_WINDOW_S)
    if not usage.allowed:
        raise RateLimited(
            f"Too many sign-ups from your address ({limit} an hour); retry in "
            f"{usage.retry_after} s.",
            retry_after=usage.retry_after,
        )
