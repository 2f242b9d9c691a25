"""Check a Python strategy at save time, by reading it (`ast`), never by running it.

It must define `class Strategy` with `init(self, ctx)` and `next(self, ctx)`; its settings
(symbol, timeframe, leverage, stop_loss_pct, take_profit_pct, params) must be plain literals so
they can be read without executing anything. Imports outside a short list and dunder attribute
names are refused here already: the sandbox that runs the code is the real boundary, this is the
early, readable answer.
"""

import ast
from dataclasses import dataclass
from typing import Any

ALLOWED_IMPORTS = frozenset({"math", "statistics", "collections", "itertools", "functools"})
SETTINGS = ("symbol", "timeframe", "leverage", "stop_loss_pct", "take_profit_pct", "params")
TIMEFRAMES = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
METHODS = ("init", "next")


class PythonSourceError(Exception):
    def __init__(self, line: int, column: int, message: str):
        super().__init__(f"line {line}:{column}: {message}")
        self.line = line
        self.column = column
        self.message = message


@dataclass(frozen=True)
class PythonSummary:
    settings: dict[str, Any]


def check(source: str) -> PythonSummary:
    try:
        return _check(source)
    except (RecursionError, MemoryError):
        # CPython's parser recurses on long chains (a + a + …, a.b.c…, ---1): name the longest
        # line, where such a chain is
        lines = source.splitlines() or [""]
        longest = max(range(len(lines)), key=lambda i: len(lines[i]))
        raise PythonSourceError(
            longest + 1, 1, "this expression nests too deeply; split it into smaller steps"
        ) from None


def _check(source: str) -> PythonSummary:
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise PythonSourceError(exc.lineno or 1, exc.offset or 1, exc.msg) from None
    _refuse_escapes(tree)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Strategy"]
    if not classes:
        raise PythonSourceError(
            1, 1, "define `class Strategy:` with init(self, ctx) and next(self, ctx)"
        )
    strategy = classes[-1]
    methods = {n.name: n for n in strategy.body if isinstance(n, ast.FunctionDef)}
    for name in METHODS:
        method = methods.get(name)
        if method is None:
            raise PythonSourceError(
                strategy.lineno,
                strategy.col_offset + 1,
                f"class Strategy has no method {name}(self, ctx)",
            )
        if len(method.args.args) != 2 or method.args.vararg or method.args.kwonlyargs:
            raise PythonSourceError(
                method.lineno, method.col_offset + 1, f"{name} takes exactly (self, ctx)"
            )
    return PythonSummary(_settings(strategy))


def _settings(strategy: ast.ClassDef) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for node in strategy.body:
        if not isinstance(node, ast.Assign):
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id in SETTINGS]
        if not names:
            continue
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            raise PythonSourceError(
                node.lineno,
                node.col_offset + 1,
                f"{names[0]} must be a plain value (a string, number, dict…)",
            ) from None
        for name in names:
            found[name] = value
    where = (strategy.lineno, strategy.col_offset + 1)
    timeframe = found.get("timeframe", "1h")
    if timeframe not in TIMEFRAMES:
        raise PythonSourceError(*where, f"timeframe must be one of {', '.join(TIMEFRAMES)}")
    leverage = found.get("leverage", 1)
    if not isinstance(leverage, int) or not 1 <= leverage <= 125:
        raise PythonSourceError(*where, "leverage must be a whole number from 1 to 125")
    if "params" in found and not isinstance(found["params"], dict):
        raise PythonSourceError(*where, "params must be a dict")
    return found


def _refuse_escapes(tree: ast.Module) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for module in modules:
                if module.split(".")[0] not in ALLOWED_IMPORTS:
                    allowed = ", ".join(sorted(ALLOWED_IMPORTS))
                    raise PythonSourceError(
                        node.lineno,
                        node.col_offset + 1,
                        f"import of {module!r} is not allowed; strategies may import {allowed}",
                    )
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            raise PythonSourceError(
                node.lineno, node.col_offset + 1, f"attribute {node.attr!r} is not allowed"
            )
        elif isinstance(node, ast.Name) and node.id.startswith("__") and node.id != "__name__":
            raise PythonSourceError(
                node.lineno, node.col_offset + 1, f"name {node.id!r} is not allowed"
            )
