"""Telling a device seen before from a new one, at sign-in (docs/notifications.md, security).

A device is the browser family, the operating system and the client's network (IPv4 /24, IPv6
/48) together: a browser update or a new address from the same provider is not a new device,
another browser or another network is. Only a keyed hash of the three is stored, on the session
(user_sessions.device_hash): it tells two devices apart and says nothing else, not the address
nor the browser. The notice itself names the browser and system (from the User-Agent of that
request), never the address.
"""

import hashlib
import hmac
import re
from ipaddress import IPv4Address, ip_address, ip_network

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.models import UserSession

# Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari".
_BROWSERS = (
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
)
_SYSTEMS = (
    ("Windows", "Windows"),
    ("Android", "Android"),
    ("iPhone", "iOS"),
    ("iPad", "iPadOS"),
    ("Mac OS X", "macOS"),
    ("CrOS", "ChromeOS"),
    ("Linux", "Linux"),
)
_PRODUCT = re.compile(r"[A-Za-z][\w.-]{0,39}")


def describe(user_agent: str) -> str:
    """The browser and system a User-Agent names, as a person reads it ("Firefox on Linux");
    a program's own name when it is no browser ("python-httpx")."""
    browser = next((name for mark, name in _BROWSERS if mark in user_agent), None)
    system = next((name for mark, name in _SYSTEMS if mark in user_agent), None)
    if browser is None:
        product = _PRODUCT.match(user_agent.strip())
        browser = product.group(0) if product else "An unknown browser"
    return f"{browser} on {system}" if system else browser


def _network(address: str) -> str:
    try:
        ip = ip_address(address)
    except ValueError:
        return address[:64]  # not an address (a test transport's name)
    prefix = 24 if isinstance(ip, IPv4Address) else 48
    return str(ip_network(f"{ip}/{prefix}", strict=False))


def device_hash(secret: str, user_agent: str, address: str) -> str:
    """The keyed hash a session keeps of the device it was opened from."""
    seen = f"{describe(user_agent)}\n{_network(address)}".encode()
    return hmac.new(secret.encode(), seen, hashlib.sha256).hexdigest()


async def is_new(session: AsyncSession, user_id: int, device: str) -> bool:
    """Whether the user signs in from a device none of their sessions came from. A user with no
    device on record (their first session since this was added) has nothing to compare with:
    that device becomes the first one known, with no notice."""
    known = set(
        await session.scalars(
            select(UserSession.device_hash)
            .where(UserSession.user_id == user_id, UserSession.device_hash.is_not(None))
            .distinct()
        )
    )
    return bool(known) and device not in known
