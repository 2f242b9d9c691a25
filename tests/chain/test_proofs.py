"""The track record's arithmetic: canonical JSON, the hash chain and RFC 6962 Merkle proofs."""

import hashlib
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papertrade.chain.proofs import (
    GENESIS,
    canonical,
    check_chain,
    decimal_text,
    event_hash,
    inclusion_path,
    iso_ms,
    leaf_hash,
    merkle_root,
    root_from_path,
)
from papertrade.chain.service import _hash_body


def rfc6962_root(leaves: list[bytes]) -> bytes:
    """RFC 6962 §2.1 as written: split at the largest power of two smaller than n."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + rfc6962_root(leaves[:k]) + rfc6962_root(leaves[k:])).digest()


def leaves(n: int) -> list[bytes]:
    return [leaf_hash(hashlib.sha256(str(i).encode()).hexdigest()) for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33])
def test_the_root_is_rfc_6962s_and_every_leaf_proves_its_way_to_it(n: int) -> None:
    tree = leaves(n)
    root = merkle_root(tree)
    assert root == rfc6962_root(tree)
    for index in range(n):
        assert root_from_path(tree[index], index, n, inclusion_path(tree, index)) == root


def test_a_proof_fails_for_another_leaf_or_a_changed_sibling() -> None:
    tree = leaves(11)
    root = merkle_root(tree)
    path = inclusion_path(tree, 6)
    assert root_from_path(tree[5], 6, 11, path) != root
    tampered = [bytes(32), *path[1:]]
    assert root_from_path(tree[6], 6, 11, tampered) != root
    with pytest.raises(ValueError, match="shorter"):
        root_from_path(tree[6], 6, 11, path[:-1])  # too short for the tree
    with pytest.raises(ValueError, match="longer"):
        root_from_path(tree[6], 6, 11, [*path, bytes(32)])  # too long


def test_the_empty_day_and_the_leaf_prefix() -> None:
    assert merkle_root([]) == hashlib.sha256(b"").digest()
    digest = "ab" * 32
    assert leaf_hash(digest) == hashlib.sha256(b"\x00" + bytes.fromhex(digest)).digest()


def test_canonical_json_is_sorted_compact_with_decimal_strings() -> None:
    event = {"qty": decimal_text(Decimal("0.50000000")), "b": 1, "a": "é"}
    assert canonical(event) == '{"a":"é","b":1,"qty":"0.5"}'
    assert decimal_text(Decimal("0E-8")) == "0"
    assert decimal_text(Decimal("-0")) == "0"
    assert decimal_text(Decimal("1E+3")) == "1000"
    assert iso_ms(1_764_080_750_123) == "2025-11-25T14:25:50.123Z"


def test_the_chain_breaks_at_an_edited_event() -> None:
    bodies, previous = [], GENESIS
    for seq in range(1, 5):
        body = canonical({"seq": seq, "prev_hash": previous, "qty": str(seq)})
        bodies.append(body)
        previous = event_hash(body)
    assert check_chain(bodies) == previous
    edited = [*bodies]
    edited[1] = edited[1].replace('"qty":"2"', '"qty":"20"')
    with pytest.raises(ValueError, match="seq 3"):
        check_chain(edited)  # the next event still names the original's hash


# Text as the chain's events hold it: any character a stored symbol, side or kind could contain,
# control characters, quotes, backslashes, non-ASCII and astral ones included (no lone
# surrogates: they cannot be stored as UTF-8).
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
_VALUE = st.one_of(st.none(), st.integers(-(2**62), 2**62), _TEXT)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_TEXT, _VALUE, max_size=12))
def test_the_service_hashes_the_canonical_json_the_verifier_rebuilds(
    event: dict[str, object],
) -> None:
    body, digest = _hash_body(dict(event))
    assert body == canonical(event)
    assert digest == event_hash(canonical(event))


def test_milliseconds_keep_their_second_around_the_epoch_and_midnight() -> None:
    assert iso_ms(-1) == "1969-12-31T23:59:59.999Z"
    assert iso_ms(0) == "1970-01-01T00:00:00.000Z"
    assert iso_ms(1_764_115_199_999) == "2025-11-25T23:59:59.999Z"
    assert iso_ms(1_764_115_200_000) == "2025-11-26T00:00:00.000Z"
