#!/usr/bin/env python3
"""Verify a Papertrade portfolio's track record yourself, without Papertrade's code.

    python verify_track_record.py https://papertrade.example P0000042 [--public-key HEX]

Needs Python 3.11+ and `cryptography` (pip install cryptography); with `opentimestamps`
installed it also checks the anchor proofs. It reads the public API only and checks:
- every event: its hash (SHA-256 of the canonical JSON as published), its seq (1, 2, 3… with
  none missing, repeated or out of order) and its link to the previous event (prev_hash);
- the chain of signed roots, from the one that covers the first event to the newest: each
  root's Ed25519 signature over its statement, and that each names the one before it (`prev`);
- that the events served are exactly the ranges the roots sign for the portfolio (first and
  last seq, and the hash of the last), and the Merkle path (RFC 6962) of each range's last event
  to its root; events after the newest root's range are reported as not yet in a root.
Exit status 0 only when all of that holds; 1 with a one-line reason otherwise (an HTTP error, a
timeout or a malformed answer included). `papertrade verify --url` runs this same file, and
`papertrade verify` without --url (the operator's check of the database) runs its checks of the
events, the chain of roots and the signed ranges (parse_root, check_events, check_roots,
check_ranges) on what the database holds.
"""

# ruff: noqa: T201  (a command-line tool: it prints its report)

import argparse
import hashlib
import http.client
import itertools
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

GENESIS = "0" * 64
PAGE = 1000


class Failed(Exception):
    """Verification cannot go on: an HTTP error, a timeout, a malformed answer."""


@dataclass
class Result:
    code: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    events: int = 0  # events served
    covered: int = 0  # events covered by the signed roots
    through: str | None = None  # the newest root covering the portfolio, as people read it
    anchored_through: str | None = None  # the newest anchored root's key
    # how a fault is told: the events come from the service (or, offline, from the database)
    withheld: str = "withheld by the service"
    served: str = "the service served"

    @property
    def ok(self) -> bool:
        return not self.problems and self.covered > 0

    def summary(self) -> str:
        if self.problems:
            return f"NOT VERIFIED: {self.problems[0]}"
        if not self.covered:
            return f"NOT VERIFIED: {self.events} events of {self.code}, none in a signed root yet"
        newer = self.events - self.covered
        return (
            f"VERIFIED: {self.covered} events of {self.code} through the root of {self.through}; "
            f"{newer} newer event{'' if newer == 1 else 's'} not yet in a root"
        )

    def render(self) -> str:
        lines = [f"  {n}" for n in self.notes] + [f"FAIL: {p}" for p in self.problems]
        return "\n".join([*lines, self.summary()])


@dataclass
class Root:
    key: str
    label: str
    root: str
    leaf_count: int
    prev: str | None  # None: a PTA1 root, which names no previous root
    ranges: dict[str, tuple[int, int, str | None]]  # code → first, last, head hash (PTA2)
    statement_hash: str
    view: dict[str, Any]


def get(base: str, path: str, timeout: float) -> Any:
    url = base.rstrip("/") + path
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            text = answer.read()
    except urllib.error.HTTPError as exc:
        raise Failed(f"GET {path} answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise Failed(f"GET {path} failed: {reason or type(exc).__name__}") from None
    except http.client.HTTPException as exc:  # not HTTP at all, or a body cut short
        raise Failed(f"GET {path} answered malformed HTTP ({type(exc).__name__})") from None
    try:
        return json.loads(text)
    except ValueError:
        raise Failed(f"GET {path} answered something that is not JSON") from None
    except RecursionError:
        raise Failed(f"GET {path} answered JSON nested too deeply to read") from None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_path(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes | None:
    """RFC 9162 §2.1.3.2; None when the path does not fit the tree."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return r if sn == 0 else None


def label(key: str) -> str:
    """A root's key as people read it: the end of its period, "2026-11-28 14:00 UTC"."""
    if len(key) == 10:
        return key
    end = datetime.strptime(key, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) + timedelta(seconds=1)
    return end.strftime("%Y-%m-%d %H:%M:%S UTC").replace(":00 UTC", " UTC")


def signature_holds(key: str, message: bytes, signature: str) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(key)).verify(
            bytes.fromhex(signature), message
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def parse_root(view: dict[str, Any], code: str, key: str, result: Result) -> Root:
    """A root's signed facts, from its statement once the signature over it holds."""
    day, text = str(view["day"]), str(view["statement"])
    if not signature_holds(key, text.encode(), str(view["signature"])):
        result.problems.append(f"the root of {label(day)}: the signature does not hold for {key}")
    if text.startswith("PTA1:"):
        signed_day, root, count = text.removeprefix("PTA1:").rsplit(":", 2)
        if signed_day != day or root != view["root"] or int(count) != int(view["leaf_count"]):
            result.problems.append(f"the root of {day}: its fields are not what it signs")
        portfolio_id = str(int(code[1:])) if code[1:].isdigit() else code
        unsigned = view.get("ranges", {}).get(portfolio_id)
        ranges: dict[str, tuple[int, int, str | None]] = {}
        if unsigned:
            ranges[code] = (int(unsigned[0]), int(unsigned[1]), None)
        return Root(
            day, label(day), root, int(count), None, ranges, sha256_hex(text.encode()), view
        )
    lines = text.split("\n")
    if lines[0] != "PTA2" or len(lines) < 4:
        raise Failed(f"the root of {day} has a statement of no known format")
    through, root_line, prev_line = lines[1].split(" "), lines[2].split(" "), lines[3].split(" ")
    if through != ["through", day] or root_line[0] != "root" or prev_line[0] != "prev":
        raise Failed(f"the root of {day}: its statement is for another root")
    ranges = {}
    for line in lines[4:]:
        name, first, last, head = line.split(" ")
        ranges[name] = (int(first), int(last), head)
    return Root(
        day,
        label(day),
        root_line[1],
        int(root_line[2]),
        prev_line[1],
        ranges,
        sha256_hex(text.encode()),
        view,
    )


def check_events(result: Result, events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Hashes, canonical form, seq order and links of the events as served; returns them by
    seq."""
    by_seq: dict[int, dict[str, Any]] = {}
    previous = GENESIS
    for position, event in enumerate(events, start=1):
        text = str(event["event"])
        try:
            body = json.loads(text)
        except ValueError:
            raise Failed(f"event {position} served is not JSON") from None
        seq = body.get("seq")
        if not isinstance(seq, int):
            raise Failed(f"event {position} served has no seq")
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if seq in by_seq:
            result.problems.append(f"seq {seq} is served twice (an extra event)")
        elif seq != position and position not in by_seq:
            later = [int(json.loads(str(e["event"])).get("seq", 0)) for e in events[position:]]
            if position in later:
                result.problems.append(
                    f"events out of order: seq {seq} is served where seq {position} belongs"
                )
            else:
                result.problems.append(f"seq {position} is missing ({result.withheld})")
        if sha256_hex(text.encode()) != event["hash"]:
            result.problems.append(f"seq {seq}: the event does not hash to its hash (edited)")
        if canonical != text:
            result.problems.append(f"seq {seq}: the event is not in canonical form")
        if body.get("prev_hash") != previous:
            result.problems.append(f"seq {seq}: prev_hash breaks the chain (an event changed)")
        previous = str(event["hash"])
        by_seq.setdefault(seq, event)
    return by_seq


def anchors(root: Root) -> list[str]:
    try:
        from opentimestamps.core.serialize import (
            BytesDeserializationContext,
        )
        from opentimestamps.core.timestamp import Timestamp
    except ImportError:
        return ["(not checked: pip install opentimestamps)"] if root.view["anchors"] else []
    digest = root.statement_hash if root.prev is not None else root.root
    found: list[str] = []
    for anchor in root.view["anchors"]:
        if anchor["calendar"].startswith("tron:"):  # a TRON memo: look its txid up yourself
            found += anchor["attestations"]
        elif anchor["proof"]:
            try:
                proof = BytesDeserializationContext(bytes.fromhex(anchor["proof"]))
                stamp = Timestamp.deserialize(proof, bytes.fromhex(digest))
                found += [repr(a) for _msg, a in stamp.all_attestations()]
            except Exception as exc:  # any parse failure is a failed proof
                raise Failed(f"the root of {root.label}: the anchor proof fails ({exc})") from None
    return found


def verify(base: str, code: str, public_key: str | None = None, timeout: float = 30) -> Result:
    """Everything above; a network error, timeout or malformed answer is the first problem."""
    result = Result(code)
    try:
        _verify(base, code, public_key, timeout, result)
    except Failed as exc:
        result.problems.insert(0, str(exc))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        result.problems.insert(0, f"a malformed answer from the service ({type(exc).__name__})")
    return result


def _verify(base: str, code: str, public_key: str | None, timeout: float, result: Result) -> None:
    served_key = str(get(base, "/v1/chain/key", timeout)["public_key"])
    key = public_key or served_key
    if public_key and public_key != served_key:
        result.problems.append("the service now signs with another key than the one given")
    portfolio = urllib.parse.quote(code)
    events = fetch_events(base, portfolio, timeout)
    result.events = len(events)
    if not events:
        return
    by_seq = check_events(result, events)
    first = get(base, f"/v1/chain/portfolios/{portfolio}/events/1/proof", timeout)
    if first["root"] is None:
        result.notes.append(f"the first root is due at {first.get('root_due')}")
        return
    roots = fetch_roots(
        base, parse_root(first["root"], code, key, result), code, key, timeout, result
    )
    check_roots(result, roots)
    expected, heads = check_ranges(result, roots, by_seq)
    for root, event in heads:
        check_path(base, portfolio, event, root, key, timeout, result)
    for root in roots:
        found = anchors(root)
        if found:
            result.notes.append(f"the root of {root.label}: anchored: {', '.join(found)}")
            result.anchored_through = root.key
    newer = [seq for seq in by_seq if seq >= expected]
    if newer:
        pending = get(base, f"/v1/chain/portfolios/{portfolio}/events/{min(newer)}/proof", timeout)
        if pending["root"] is not None:
            result.problems.append(
                f"seq {min(newer)}: the service puts it in the root of "
                f"{label(str(pending['root']['day']))}, which does not sign it for {code}"
            )
        else:
            result.notes.append(
                f"seq {min(newer)}–{max(newer)}: not in a root yet; due {pending['root_due']}"
            )


def fetch_events(base: str, portfolio: str, timeout: float) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        after = int(events[-1]["seq"]) if events else 0
        page = get(
            base,
            f"/v1/chain/portfolios/{portfolio}/events?limit={PAGE}&after_seq={after}",
            timeout,
        )["items"]
        if not page:
            return events
        if int(page[-1]["seq"]) <= after:
            raise Failed("the service pages its events backwards")
        events += page


def fetch_roots(
    base: str, first: Root, code: str, key: str, timeout: float, result: Result
) -> list[Root]:
    """The roots from `first` to the newest, in order; check_roots then checks their chain."""
    roots = [first]
    while True:
        after_key = urllib.parse.quote(roots[-1].key)
        page = get(base, f"/v1/chain/roots?after={after_key}&limit=100", timeout)["items"]
        if not page:
            return roots
        for view in page:
            root = parse_root(view, code, key, result)
            if root.key <= roots[-1].key:
                raise Failed(f"the service lists the root of {root.label} out of order")
            roots.append(root)


def check_roots(result: Result, roots: list[Root], first_of_all: bool = False) -> None:
    """That the roots, in order, form an unbroken chain: each PTA2 root names the statement
    hash of the one before it (`prev`); PTA1 roots (daily, of releases before period roots)
    name none and may only come before the first PTA2 root. `first_of_all`: roots[0] is the
    service's very first root, so a PTA2 one must name no predecessor (64 zeros)."""
    if first_of_all and roots and roots[0].prev not in (None, GENESIS):
        result.problems.append(
            f"the root of {roots[0].label} names a previous root, but no root comes before it"
        )
    for before, root in itertools.pairwise(roots):
        if root.prev is None and before.prev is not None:
            result.problems.append(
                f"the root of {root.label} is an unchained PTA1 root after the PTA2 root of "
                f"{before.label}"
            )
        elif root.prev is not None and root.prev != before.statement_hash:
            result.problems.append(
                f"the root of {root.label} does not follow the root of {before.label} "
                "(its prev is not that root's statement hash)"
            )
    if any(r.prev is None for r in roots):
        result.notes.append("roots before the first PTA2 root are daily PTA1 roots (not chained)")


def check_ranges(
    result: Result, roots: list[Root], by_seq: dict[int, dict[str, Any]]
) -> tuple[int, list[tuple[Root, dict[str, Any]]]]:
    """The events (by seq, as check_events returns them) against the ranges the roots sign for
    the portfolio: each range starts where the one before ended (at seq 1 for the first), and
    its last event is there with the hash the root signs. Returns the first seq no root covers,
    and each range's root with its last event, whose Merkle path to that root is left to check
    (from the service's proof, or offline from the root's leaves)."""
    code = result.code
    served_last = max(by_seq) if by_seq else 0
    expected = 1
    heads: list[tuple[Root, dict[str, Any]]] = []
    for root in roots:
        if code not in root.ranges:
            continue
        first_seq, last_seq, head = root.ranges[code]
        if first_seq != expected:
            result.problems.append(
                f"the root of {root.label} signs seq {first_seq}–{last_seq} of {code}, "
                f"but the roots shown cover up to seq {expected - 1}"
            )
        if last_seq not in by_seq:
            result.problems.append(
                f"seq {last_seq} is withheld: the root of {root.label} signs seq "
                f"{first_seq}–{last_seq}, {result.served} up to seq {served_last}"
            )
        else:
            event = by_seq[last_seq]
            if head is not None and event["hash"] != head:
                result.problems.append(
                    f"seq {last_seq}: the event served is not the one the root of {root.label} "
                    "signed (edited)"
                )
            heads.append((root, event))
        expected = last_seq + 1
        result.covered, result.through = last_seq, root.label
    return expected, heads


def check_path(
    base: str,
    portfolio: str,
    event: dict[str, Any],
    root: Root,
    key: str,
    timeout: float,
    result: Result,
) -> None:
    seq = int(event["seq"])
    proof = get(base, f"/v1/chain/portfolios/{portfolio}/events/{seq}/proof", timeout)
    if proof["root"] is None:
        result.problems.append(
            f"seq {seq}: the service has no root for it, yet {root.label} signs it"
        )
        return
    if proof["root"]["statement_hash"] != root.statement_hash:
        result.problems.append(f"seq {seq}: its proof names another root than {root.label}")
    leaf = hashlib.sha256(b"\x00" + bytes.fromhex(str(event["hash"]))).digest()
    path = [bytes.fromhex(p) for p in proof["path"]]
    rebuilt = root_from_path(leaf, int(proof["leaf_index"]), root.leaf_count, path)
    if proof["entry"]["hash"] != event["hash"] or rebuilt is None or rebuilt.hex() != root.root:
        result.problems.append(
            f"seq {seq}: the Merkle path does not lead to the root of {root.label}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("base_url")
    parser.add_argument("code")
    parser.add_argument("--public-key", help="the attestation key you trust (hex)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds per request")
    args = parser.parse_args(argv)
    result = verify(args.base_url, args.code, args.public_key, args.timeout)
    print(result.render())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
