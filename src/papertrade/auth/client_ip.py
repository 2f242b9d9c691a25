"""Who is on the other end: the client IP that per-address budgets are charged to.

The TCP peer, unless that peer is one of the configured trusted proxies: then X-Forwarded-For is
read from the right, skipping trusted proxies, and the first address that is not one is the
client (anything further left was written by the client and could be anything). IPv6 clients
are budgeted per /64, the block one subscriber usually holds.
"""

from functools import lru_cache
from ipaddress import IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

from starlette.types import Scope

from papertrade.config import Settings

Network = IPv4Network | IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ip_network(entry, strict=False) for entry in entries)


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_ip(scope: Scope, settings: Settings) -> str:
    """The client's address as the budgets see it (see the module docstring)."""
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    networks = _networks(tuple(settings.trusted_proxies))
    if not networks or not _trusted(peer, networks):
        return peer
    hops: list[str] = []
    for name, value in scope.get("headers", []):
        if name == b"x-forwarded-for":
            hops += [hop.strip() for hop in value.decode("latin-1").split(",")]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            return hop
    return peer


def budget_key(address: str) -> str:
    """The key an address is budgeted under: itself, or its /64 for IPv6."""
    try:
        ip = ip_address(address)
    except ValueError:
        return address[:64]  # not an address (a test transport's name): still one budget
    if isinstance(ip, IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ip_network(f"{ip}/64", strict=False))
    return str(ip)


def client_key(scope: Scope, settings: Settings) -> str:
    """The budget key of the request's client."""
    return budget_key(client_ip(scope, settings))
