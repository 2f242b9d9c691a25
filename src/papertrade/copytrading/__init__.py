"""Copy trading: relations, mirroring of leader fills, revenue share (docs/social.md)."""
