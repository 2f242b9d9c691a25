"""What a fill or a ledger row is in the chain: its B7 event, before the chain adds `seq` and
`prev_hash`. The verifier rebuilds these from the stored rows, so an edited fill shows."""

from typing import Any

from papertrade.chain.proofs import decimal_text, iso_ms
from papertrade.models import Fill, LedgerEntry

# What the events are made of: read as plain columns (a fill row or the ORM object both fit).
FILL_COLUMNS = (
    Fill.id,
    Fill.portfolio_id,
    Fill.created_at,
    Fill.is_liquidation,
    Fill.symbol,
    Fill.side,
    Fill.quantity,
    Fill.price,
    Fill.commission,
    Fill.realized_pnl,
)
LEDGER_COLUMNS = (
    LedgerEntry.id,
    LedgerEntry.portfolio_id,
    LedgerEntry.created_at,
    LedgerEntry.kind,
    LedgerEntry.symbol,
    LedgerEntry.amount,
    LedgerEntry.balance_after,
)


def fill_event(fill: Any) -> dict[str, Any]:
    return {
        "portfolio_id": fill.portfolio_id,
        "ref": f"fill:{fill.id}",
        "ts": iso_ms(fill.created_at),
        "event_type": "liquidation" if fill.is_liquidation else "fill",
        "symbol": fill.symbol,
        "side": fill.side,
        "qty": decimal_text(fill.quantity),
        "price": decimal_text(fill.price),
        "fee": decimal_text(fill.commission),
        "realized_pnl": decimal_text(fill.realized_pnl),
    }


def ledger_event(entry: Any) -> dict[str, Any]:
    """A balance change that is not part of a fill (deposits, top-ups, resets, funding): a
    fill's own ledger rows (its PnL and fee) are in its fill event already."""
    return {
        "portfolio_id": entry.portfolio_id,
        "ref": f"ledger:{entry.id}",
        "ts": iso_ms(entry.created_at),
        "event_type": f"ledger.{entry.kind}",
        "symbol": entry.symbol,
        "amount": decimal_text(entry.amount),
        "balance_after": decimal_text(entry.balance_after),
    }
