"""docs/strategies.md: every DSL example parses and backtests; every Python example passes the
save-time check and runs, in its sandbox, through a backtest."""

import re
from decimal import Decimal
from pathlib import Path

import numpy as np

from papertrade.strategies import pycheck
from papertrade.strategies.backtest.simulate import Costs, simulate
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl.parse import parse
from papertrade.strategies.jobs import compute
from papertrade.trading.fees import FeeSchedule

DOC = (Path(__file__).resolve().parents[2] / "docs" / "strategies.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)


def candles() -> Bars:
    rng = np.random.default_rng(11)
    closes = 2000 + np.cumsum(rng.normal(0, 8, 5000))
    opens = np.concatenate(([closes[0]], closes[:-1]))
    return Bars(
        time=np.arange(len(closes), dtype=np.int64) * 3_600_000,
        open=opens,
        high=np.maximum(opens, closes) + 3,
        low=np.minimum(opens, closes) - 3,
        close=closes,
        volume=np.ones(len(closes)),
    )


def test_the_dsl_examples_parse_and_backtest() -> None:
    examples = blocks("dsl")
    assert len(examples) >= 2
    bars = candles()
    for source in examples:
        program = parse(source)
        outcome = simulate(program, bars, Costs(Decimal(10_000), FeeSchedule()))
        assert outcome.trades, source  # each example trades on a random walk


def test_the_python_examples_pass_the_save_check_and_run() -> None:
    examples = blocks("python")
    assert len(examples) >= 2
    bars = candles()
    reasons: set[str] = set()
    for source in examples:
        summary = pycheck.check(source)
        assert summary.settings["symbol"] == "BTCUSDT"
        # run for real: in the sandbox, its orders through the backtest kernel
        result = compute("python", source, bars, Costs(Decimal(10_000), FeeSchedule()))
        assert result["trades"], source
        if "limit=" in source:
            fills = [f for t in result["trades"] for f in t["fills"]]
            reasons = {f["reason"] for f in fills}
            assert {"stop", "take_profit"} <= reasons, reasons  # its sl and tp were hit
            # limit entries filled at their limit inside the bar, below that bar's open
            entries = [t["fills"][0] for t in result["trades"]]
            opens = dict(zip(bars.time.tolist(), bars.open.tolist(), strict=True))
            assert any(float(e["price"]) < opens[e["time"]] for e in entries)
            assert any("not reached" in r["reason"] for r in result["refusals"])
    assert reasons, "no example uses sl/tp/limit"
