"""The name others see of a user (no imports of other areas, so any area can use it)."""

from papertrade.models import User


def public_name(user: User) -> str:
    """The name others see: the display name, unless it is still the e-mail address (the
    default at sign-up), which is never shown to others."""
    if user.display_name and "@" not in user.display_name:
        return user.display_name
    return f"trader{user.id}"
