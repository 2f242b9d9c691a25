#!/usr/bin/env python3
"""Verify a Papertrade portfolio's track record yourself, without Papertrade's code.

    python verify_track_record.py https://papertrade.example P0000042 [--public-key HEX]

Needs Python 3.11+ and `cryptography` (pip install cryptography); with `opentimestamps`
installed it also checks the anchor proofs. It reads the public API only and checks, for every
event: its hash (SHA-256 of the canonical JSON as published), its link to the previous event
(prev_hash, seq); and for the last event of each day: the Merkle path (RFC 6962) to that day's
root, the Ed25519 signature over "PTA1:<day>:<root>:<leaf_count>" and the anchor. The chain
links every earlier event to that last one, so one path per day covers the day.
Exit status 0 when everything holds, 1 when anything does not (each failure is printed).
"""

# ruff: noqa: T201  (a command-line tool: it prints its report)

import argparse
import hashlib
import json
import sys
import urllib.error
import urllib.request
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base.rstrip("/") + path, timeout=30) as answer:
        return json.load(answer)


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_path(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes | None:
    """RFC 9162 §2.1.3.2; None when the path does not fit the tree."""
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


def anchors(root: dict[str, Any]) -> list[str]:
    try:
        from opentimestamps.core.serialize import BytesDeserializationContext
        from opentimestamps.core.timestamp import Timestamp
    except ImportError:
        return ["(not checked: pip install opentimestamps)"]
    found = []
    for anchor in root["anchors"]:
        if anchor["calendar"].startswith("tron:"):  # a TRON memo: look its txid up yourself
            found += anchor["attestations"]
        elif anchor["proof"]:
            proof = BytesDeserializationContext(bytes.fromhex(anchor["proof"]))
            stamp = Timestamp.deserialize(proof, bytes.fromhex(root["root"]))
            found += [repr(a) for _msg, a in stamp.all_attestations()]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base_url")
    parser.add_argument("code")
    parser.add_argument("--public-key", help="the attestation key you trust (hex)")
    args = parser.parse_args()
    key = args.public_key or get(args.base_url, "/v1/chain/key")["public_key"]
    failures: list[str] = []
    events: list[dict[str, Any]] = []
    while page := get(
        args.base_url,
        f"/v1/chain/portfolios/{args.code}/events?limit=1000&after_seq={len(events)}",
    )["items"]:
        events += page
    previous = "0" * 64
    for seq, event in enumerate(events, start=1):
        body = json.loads(event["event"])
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if hashlib.sha256(event["event"].encode()).hexdigest() != event["hash"]:
            failures.append(f"seq {seq}: the event does not hash to its hash")
        if canonical != event["event"] or body["seq"] != seq or body["prev_hash"] != previous:
            failures.append(f"seq {seq}: the event is not canonical or breaks the chain")
        previous = event["hash"]
    last_of_day = {e["day"]: e for e in events}
    for day, event in sorted(last_of_day.items()):
        try:
            proof = get(
                args.base_url, f"/v1/chain/portfolios/{args.code}/events/{event['seq']}/proof"
            )
        except urllib.error.HTTPError as exc:
            print(f"{day}: no root yet ({exc.code})")
            continue
        root = proof["root"]
        leaf = hashlib.sha256(b"\x00" + bytes.fromhex(event["hash"])).digest()
        path = [bytes.fromhex(p) for p in proof["path"]]
        rebuilt = root_from_path(leaf, proof["leaf_index"], root["leaf_count"], path)
        if (
            proof["entry"]["hash"] != event["hash"]
            or rebuilt is None
            or rebuilt.hex() != root["root"]
        ):
            failures.append(f"{day}: the Merkle path does not lead to the day's root")
        message = f"PTA1:{day}:{root['root']}:{root['leaf_count']}".encode()
        try:
            Ed25519PublicKey.from_public_bytes(bytes.fromhex(key)).verify(
                bytes.fromhex(root["signature"]), message
            )
        except (InvalidSignature, ValueError):
            failures.append(f"{day}: the root's signature does not hold for key {key}")
        print(f"{day}: root {root['root']} anchors: {anchors(root) or 'none yet'}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(events)} events; " + ("VERIFIED" if events and not failures else "NOT VERIFIED"))
    return 0 if events and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
