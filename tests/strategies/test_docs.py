"""docs/strategies.md: every DSL example parses and backtests, every Python example passes the
save-time check."""

import re
from decimal import Decimal
from pathlib import Path

import numpy as np

from papertrade.strategies import pycheck
from papertrade.strategies.backtest.simulate import Costs, simulate
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl.parse import parse
from papertrade.trading.fees import FeeSchedule

DOC = (Path(__file__).resolve().parents[2] / "docs" / "strategies.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)


def test_the_dsl_examples_parse_and_backtest() -> None:
    examples = blocks("dsl")
    assert len(examples) >= 2
    rng = np.random.default_rng(11)
    closes = 2000 + np.cumsum(rng.normal(0, 8, 5000))
    opens = np.concatenate(([closes[0]], closes[:-1]))
    bars = Bars(
        time=np.arange(len(closes), dtype=np.int64) * 3_600_000,
        open=opens,
        high=np.maximum(opens, closes) + 3,
        low=np.minimum(opens, closes) - 3,
        close=closes,
        volume=np.ones(len(closes)),
    )
    for source in examples:
        program = parse(source)
        outcome = simulate(program, bars, Costs(Decimal(10_000), FeeSchedule()))
        assert outcome.trades, source  # each example trades on a random walk


def test_the_python_examples_pass_the_save_check() -> None:
    examples = blocks("python")
    assert examples
    for source in examples:
        summary = pycheck.check(source)
        assert summary.settings["symbol"] == "BTCUSDT"
