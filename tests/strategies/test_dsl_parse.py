"""The DSL grammar: what parses, precedence, aliases, and errors at line:column."""

import pytest

from papertrade.strategies.dsl import ast
from papertrade.strategies.dsl.parse import DslError, parse

EXAMPLE = """symbol BTCUSDT
timeframe 1h
leverage 3
stop_loss 2%
take_profit 4%
when rsi(14) < 30 and close > sma(200) then buy 10%
when rsi(14) > 70 or ema(12) crosses below ema(26) then close long
"""


def test_the_reference_example_parses_with_its_settings() -> None:
    program = parse(EXAMPLE)
    assert (program.symbol, program.timeframe, program.leverage) == ("BTCUSDT", "1h", 3)
    assert (program.stop_loss_pct, program.take_profit_pct) == (2.0, 4.0)
    first, second = program.rules
    assert first.line == 6 and first.actions == (ast.Entry("long", ast.Size(10.0, "%")),)
    assert second.actions == (ast.Exit("long"),)
    assert isinstance(second.condition, ast.Logic) and second.condition.op == "or"


def test_and_binds_tighter_than_or_and_parentheses_override() -> None:
    plain = parse("when close > 1 or close > 2 and close > 3 then buy").rules[0].condition
    assert isinstance(plain, ast.Logic) and plain.op == "or"
    assert isinstance(plain.right, ast.Logic) and plain.right.op == "and"
    grouped = parse("when (close > 1 or close > 2) and close > 3 then buy").rules[0].condition
    assert isinstance(grouped, ast.Logic) and grouped.op == "and"


def test_pine_aliases_and_case_are_accepted() -> None:
    pine = parse("WHEN ta.crossover(ta.sma(close, 10), SMA(30)) THEN Long").rules[0]
    native = parse("when sma(10) crosses above sma(30) then long").rules[0]
    assert pine.condition == native.condition
    assert parse("when price > 1 then buy").rules[0].condition == ast.Compare(
        ">", ast.Column("close"), ast.Number(1.0)
    )


def test_comments_blank_lines_and_several_actions() -> None:
    program = parse("# my strategy\n\nwhen close > open then close short, buy 100 usdt  # go\n")
    assert program.rules[0].actions == (ast.Exit("short"), ast.Entry("long", ast.Size(100, "usdt")))


@pytest.mark.parametrize(
    ("source", "line", "column", "says"),
    [
        ("when close > then buy", 1, 14, "expected"),
        ("when close > 1 then buy\nwhen close >> 3 then sell", 2, 13, "unexpected '>'"),
        ("when close > 1 then jump", 1, 21, "buy/sell/long/short"),
        ("when close > 1 then buy 10 btc", 1, 28, "%, usdt or qty"),
        ("when smaa(3) > 1 then buy", 1, 6, "unknown function 'smaa'"),
        ("when sma(0) > 1 then buy", 1, 6, "from 1 to 500"),
        ("when sma(501) > 1 then buy", 1, 6, "from 1 to 500"),
        ("when close then buy", 1, 1, "true or false"),
        ("when close > 1 and 3 then buy", 1, 16, "true or false"),
        ("timeframe 2h\nwhen close > 1 then buy", 1, 11, "timeframe"),
        ("symbol BTCUSDT\n", 1, 1, "at least one"),
        ("leverage 3\nleverage 4\nwhen close > 1 then buy", 2, 1, "set twice"),
    ],
)
def test_errors_say_where_and_what_was_expected(
    source: str, line: int, column: int, says: str
) -> None:
    with pytest.raises(DslError) as caught:
        parse(source)
    assert (caught.value.line, caught.value.column) == (line, column), str(caught.value)
    assert says in str(caught.value)


def test_limits_on_rules_and_conditions() -> None:
    many_rules = "\n".join("when close > 1 then buy" for _ in range(21))
    with pytest.raises(DslError, match="at most 20 rules"):
        parse(many_rules)
    many_conditions = " and ".join("close > 1" for _ in range(11))
    with pytest.raises(DslError, match="at most 10 conditions"):
        parse(f"when {many_conditions} then buy")
