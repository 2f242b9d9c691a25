"""Comments on public portfolios, one level of replies (docs/comments.md)."""
