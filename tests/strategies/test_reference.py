"""The strategy reference (strategies/reference.py, shown in the editor and at /help/strategies)
is built from the parser's grammar and registry and from the sandbox's ctx: every name they
define is explained, nothing else is, and every example in it is accepted by the server."""

import html
import re
from pathlib import Path

from papertrade.strategies import pycheck
from papertrade.strategies import reference as ref
from papertrade.strategies.dsl import functions
from papertrade.strategies.dsl.parse import parse
from papertrade.strategies.sandbox import runner


def test_every_name_the_code_defines_is_explained_and_nothing_else() -> None:
    built = ref.reference()
    assert set(ref.DSL_SETTINGS) == set(ref.dsl_setting_keywords())
    assert set(ref.DSL_FUNCTIONS) == set(functions.FUNCTIONS)
    assert set(ref.PYTHON_SETTINGS) == set(pycheck.SETTINGS)
    assert set(ref.PYTHON_INDICATORS) == set(runner.INDICATORS)
    assert set(ref.PYTHON_METHODS) == {m.name for m in ref.python_ctx_methods()}
    assert set(ref.PYTHON_FIELDS) == set(ref.python_ctx_fields())
    assert set(ref.PYTHON_BAR) == set(ref.python_bar_fields())
    assert set(ref.PYTHON_POSITION) == set(ref.python_position_fields())
    lists = [
        built.dsl_settings, built.dsl_functions, built.dsl_sizes, built.dsl_closes,
        built.python_settings, built.python_methods, built.python_indicators,
        built.python_fields, built.python_bar, built.python_position,
    ]  # fmt: skip
    for items in lists:
        assert items
        assert all(item.what for item in items), items


def test_the_signatures_are_the_codes() -> None:
    built = ref.reference()
    calls = {m.name: m.syntax for m in built.python_methods}
    assert calls["buy"] == "ctx.buy(size=0.1, sl=None, tp=None, limit=None)"
    assert calls["indicator"] == "ctx.indicator(name, *args, source='close')"
    assert calls["crossover"] == "ctx.crossover(a, b)"
    dsl = {f.name: f.syntax for f in built.dsl_functions}
    assert dsl["macd_hist"] == "macd_hist([series,] fast=12, slow=26, signal=9)"
    assert dsl["atr"] == "atr(period=14)"
    assert dsl["sma"] == "sma([series,] period)"
    assert built.dsl_entries == ["buy", "long", "sell", "short"]
    assert "crosses above" in built.dsl_comparators
    assert built.python_imports == sorted(pycheck.ALLOWED_IMPORTS)


def test_every_example_in_it_is_accepted() -> None:
    built = ref.reference()
    settings = "\n".join(item.syntax for item in built.dsl_settings)
    calls = [re.sub(r"\[series,\] ", "", f.syntax) for f in built.dsl_functions]
    calls = [re.sub(r"(\w+)=([\d.]+)", r"\2", c).replace("(period)", "(20)") for c in calls]
    rules = [f"when {c} > 0 then buy" for c in calls]
    rules = rules[: functions.MAX_RULES - len(built.dsl_sizes) - len(built.dsl_closes)]
    rules += [f"when close > 0 then {s.syntax}" for s in built.dsl_sizes]
    rules += [f"when close < 0 then {c.syntax}" for c in built.dsl_closes]
    parse(settings + "\n" + "\n".join(rules))
    aliases = [
        f"when {a.name}(close, sma(3)) then buy"
        if "(a, b)" in a.syntax
        else f"when {a.name}(3) > 0 then buy"
        for a in built.dsl_aliases
    ]
    parse("\n".join(aliases))
    indicators = "\n".join(f"        x = {i.syntax}" for i in built.python_indicators)
    source = (
        "\n".join(f"class Strategy:\n    {s.syntax}" for s in built.python_settings[:1])
        + "\n"
        + "\n".join(f"    {s.syntax}" for s in built.python_settings[1:])
        + f"\n\n    def init(self, ctx):\n{indicators}\n\n    def next(self, ctx):\n"
        + "        ctx.buy(size=0.5)\n"
    )
    summary = pycheck.check(source)
    assert set(summary.settings) == set(pycheck.SETTINGS)


def test_the_help_pages_examples_are_accepted() -> None:
    page = (
        Path(ref.__file__).resolve().parents[1] / "web" / "templates" / "help_strategies.html"
    ).read_text()
    dsl, python = (
        html.unescape(block)
        for block in re.findall(r'<pre class="ref-code"><code>(.*?)</code></pre>', page, re.S)
    )
    assert parse(dsl).rules
    pycheck.check(python)
