"""Writes the replay sample shipped in data/replay_sample (python -m papertrade.market.sample).

The rows come from the simulation's price path with a fixed seed, so the files are reproducible
byte for byte; a test regenerates them and compares.
"""

import sys
from pathlib import Path

from papertrade.market.catalogue import catalogue, sim_profile
from papertrade.market.replay_data import CANDLE_COLUMNS
from papertrade.market.simpath import MINUTE_MS, PathParams, PricePath

SAMPLE_DIR = Path(__file__).parent / "data" / "replay_sample"
SAMPLE_SEED = 7
SAMPLE_START_MS = 1_735_689_600_000  # 2025-01-01 00:00 UTC
SAMPLE_HOURS = 6
SAMPLE_SYMBOLS = ("BTCUSDT", "ETHUSDT")


def sample_rows(symbol: str, *, seed: int, start_ms: int, minutes: int) -> list[str]:
    """CSV lines (header first) of 1m candles for `symbol` from the simulated path."""
    instrument = catalogue()[symbol]
    path = PricePath(PathParams.build(seed, instrument, sim_profile(symbol)))
    tick, step = instrument.tick_size, instrument.step_size
    lines = [",".join(CANDLE_COLUMNS)]
    for m in range(minutes):
        t = start_ms + m * MINUTE_MS
        bar = path.summary(t, t + MINUTE_MS)
        prices = (tick * bar.open, tick * bar.high, tick * bar.low, tick * bar.close)
        lines.append(",".join([str(t), *map(str, prices), str(step * bar.volume)]))
    return lines


def write_replay_sample(
    dest: Path = SAMPLE_DIR,
    *,
    seed: int = SAMPLE_SEED,
    start_ms: int = SAMPLE_START_MS,
    hours: int = SAMPLE_HOURS,
    symbols: tuple[str, ...] = SAMPLE_SYMBOLS,
) -> list[Path]:
    """Write <SYMBOL>.csv files of 1m candles into `dest`; returns their paths."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for symbol in symbols:
        lines = sample_rows(symbol, seed=seed, start_ms=start_ms, minutes=hours * 60)
        target = dest / f"{symbol}.csv"
        target.write_text("\n".join(lines) + "\n", encoding="ascii")
        written.append(target)
    return written


if __name__ == "__main__":
    write_replay_sample(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE_DIR)
