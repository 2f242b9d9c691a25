"""The engine: resting-order matching on the market stream, funding, liquidation, snapshots."""
