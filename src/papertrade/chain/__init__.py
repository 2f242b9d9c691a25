"""The attested track record: hash chains per portfolio, daily signed Merkle roots, anchors."""
