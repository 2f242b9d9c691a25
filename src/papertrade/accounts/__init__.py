"""A portfolio's money: equity, the ledger, fills, reset and top-up."""
