"""The pure arithmetic of the track record (B7): canonical event JSON, the hash chain, the
RFC 6962 Merkle tree and its inclusion proofs, and the signed statement of a day's root.

Standard library only, so that the verifier (`papertrade verify`, scripts/verify_track_record.py)
needs nothing of the service to check what the service published.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

GENESIS = "0" * 64  # the prev_hash of a chain's first event
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def decimal_text(value: Decimal) -> str:
    """A number as its shortest exact decimal string: 1.50000000 → "1.5", 0E-8 → "0"."""
    if value == 0:
        return "0"
    text = format(value.normalize(), "f")
    return text


def iso_ms(ms: int) -> str:
    """UTC time at millisecond precision: 2026-11-25T14:25:50.123Z."""
    return _iso_second(ms // 1000) + f"{ms % 1000:03d}Z"


@lru_cache(maxsize=4096)
def _iso_second(second: int) -> str:
    # Cached: a busy chain hashes many events per second, and strftime is most of iso_ms.
    return (_EPOCH + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.")


def utc_day(ms: int) -> str:
    return (_EPOCH + timedelta(milliseconds=ms)).strftime("%Y-%m-%d")


def canonical(event: Mapping[str, Any]) -> str:
    """Keys sorted, no whitespace, non-ASCII kept as is: the exact text that is hashed."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def check_chain(bodies: Sequence[str], start_prev: str = GENESIS, start_seq: int = 1) -> str:
    """Check that `bodies` link up (each names the previous one's hash, seq goes up by one);
    return the last hash. Raises ValueError naming the first break."""
    previous, seq = start_prev, start_seq
    for body in bodies:
        event = json.loads(body)
        if event.get("prev_hash") != previous:
            raise ValueError(f"seq {event.get('seq')}: prev_hash does not match the chain")
        if event.get("seq") != seq:
            raise ValueError(f"seq {event.get('seq')}: expected seq {seq}")
        previous, seq = event_hash(body), seq + 1
    return previous


# RFC 6962 (Certificate Transparency) Merkle tree: leaf = H(0x00 ‖ data), node = H(0x01 ‖ l ‖ r).
# Built level by level, an odd node at the end of a level moves up unchanged: the same tree as
# the RFC's split at the largest power of two below n.


def leaf_hash(event_hash_hex: str) -> bytes:
    return hashlib.sha256(b"\x00" + bytes.fromhex(event_hash_hex)).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _next_level(level: Sequence[bytes]) -> list[bytes]:
    sha = hashlib.sha256
    upper = [sha(b"\x01" + a + b).digest() for a, b in zip(level[0::2], level[1::2], strict=False)]
    if len(level) % 2:
        upper.append(level[-1])
    return upper


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    """The root over leaf hashes (already H(0x00 ‖ …)); the empty tree's root is H("")."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    level = list(leaves)
    while len(level) > 1:
        level = _next_level(level)
    return level[0]


def inclusion_path(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """The RFC 6962 audit path of leaf `index`: the siblings from the bottom up."""
    if not 0 <= index < len(leaves):
        raise IndexError("no such leaf")
    path: list[bytes] = []
    level = list(leaves)
    while len(level) > 1:
        if index % 2:
            path.append(level[index - 1])
        elif index + 1 < len(level):
            path.append(level[index + 1])
        level = _next_level(level)
        index //= 2
    return path


def root_from_path(leaf: bytes, index: int, size: int, path: Sequence[bytes]) -> bytes:
    """The root that `path` leads to from `leaf` (RFC 9162 §2.1.3.2); ValueError when the path
    does not fit a tree of `size` leaves."""
    if not 0 <= index < size:
        raise ValueError("the leaf index is outside the tree")
    fn, sn, node = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            raise ValueError("the path is longer than the tree is deep")
        if fn & 1 or fn == sn:
            node = _node(sibling, node)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            node = _node(node, sibling)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ValueError("the path is shorter than the tree is deep")
    return node


def statement(day: str, root_hex: str, leaf_count: int) -> bytes:
    """What the attestation key signs for a day: version, day, root and how many events."""
    return f"PTA1:{day}:{root_hex}:{leaf_count}".encode()


# Period roots (PTA2). Each chain entry carries a key: the UTC second of its event
# ("2026-11-28T13:59:59Z"), never earlier than its portfolio's previous entry's nor at or before
# the newest root's. A root covers every entry whose key is after the previous root's key and
# at or before its own; its key is the last second of the period it closes. Keys of the daily
# roots of earlier releases are days ("2026-11-27", PTA1): they sort before every second of
# the following days, so one string order runs through both.

KEY_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
NO_ROOT = "0" * 64  # the `prev` of the first root


def second_key(ms: int) -> str:
    return (_EPOCH + timedelta(seconds=ms // 1000)).strftime(KEY_FORMAT)


def is_day_key(key: str) -> bool:
    return len(key) == 10


def key_end_ms(key: str) -> int:
    """The first millisecond after what `key` covers (a day's end, or the second's)."""
    if is_day_key(key):
        start = datetime.fromisoformat(key).replace(tzinfo=UTC)
        return int((start - _EPOCH) / timedelta(milliseconds=1)) + 86_400_000
    moment = datetime.strptime(key, KEY_FORMAT).replace(tzinfo=UTC)
    return int((moment - _EPOCH) / timedelta(milliseconds=1)) + 1000


def key_after(key: str) -> str:
    """The first key a root taken after `key`'s can cover."""
    return second_key(key_end_ms(key))


def cutoff_key(now: int, every_s: int) -> str:
    """The key of the root that closes the last finished period of `every_s` seconds."""
    every_ms = max(1, every_s) * 1000
    return second_key(now // every_ms * every_ms - 1000)


def period_label(key: str) -> str:
    """How people read a root's key: the end of the period it closes, "2026-11-28 14:00 UTC"."""
    end = _EPOCH + timedelta(milliseconds=key_end_ms(key))
    if is_day_key(key):
        return key
    return end.strftime("%Y-%m-%d %H:%M:%S UTC").replace(":00 UTC", " UTC")


def statement_v2(
    key: str, root_hex: str, leaf_count: int, prev: str, ranges: Sequence[tuple[str, int, int, str]]
) -> bytes:
    """What the attestation key signs for a period root: its key, the Merkle root and leaf
    count, the previous root's statement hash, and for every portfolio in it its code, first
    and last seq and the hash of its last event (ranges sorted by code)."""
    lines = ["PTA2", f"through {key}", f"root {root_hex} {leaf_count}", f"prev {prev}"]
    lines += [f"{code} {first} {last} {head}" for code, first, last, head in ranges]
    return "\n".join(lines).encode()


def statement_hash(signed: bytes) -> str:
    return hashlib.sha256(signed).hexdigest()


def memo(key: str, root_hex: str, leaf_count: int, signed: str | None) -> bytes:
    """What a TRON memo carries: a PTA1 root's statement, or a PTA2 root's key and statement
    hash (the statement itself, one line per portfolio, does not fit a memo)."""
    if signed is None:
        return statement(key, root_hex, leaf_count)
    return f"PTA2:{key}:{statement_hash(signed.encode())}".encode()
