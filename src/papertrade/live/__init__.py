"""Live accounts: mirroring a paper portfolio onto an exchange sub-account, with a kill switch."""
