"""Source text to a checked `Program`, or a `DslError` saying where and what was expected."""

from functools import cache
from pathlib import Path
from typing import Any, cast

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from papertrade.strategies.dsl import ast
from papertrade.strategies.dsl.functions import (
    ALIASES,
    CROSS_FUNCTIONS,
    FUNCTIONS,
    MAX_CONDITIONS,
    MAX_PERIOD,
    MAX_RULES,
    SERIES,
)

# What lark calls its terminals, in words a user reads.
TERMINAL_WORDS = {
    "NAME": "a name (close, sma, …)",
    "NUMBER": "a number",
    "COMPARATOR": "a comparison (<, >, …)",
    "CROSSES": "crosses",
    "WHEN": "when",
    "THEN": "then",
    "AND": "and",
    "OR": "or",
    "NOT": "not",
    "ENTRY": "buy/sell/long/short",
    "CLOSE": "close",
    "CLOSE_WHICH": "long/short/all",
    "SIZE_UNIT": "%, usdt or qty",
    "DIRECTION": "above/below",
    "TIMEFRAME": "a timeframe (1m, 5m, 15m, 30m, 1h, 4h, 1d)",
    "SYMBOL": "a symbol",
    "LPAR": "(",
    "RPAR": ")",
    "COMMA": ",",
    "PERCENT": "%",
    "ADD_OP": "+ or -",
    "MUL_OP": "* or /",
    "MINUS": "-",
    "_NL": "a new line",
    "$END": "the end of the source",
}


class DslError(Exception):
    """A source that is not a valid strategy: where (1-based line and column) and what."""

    def __init__(self, line: int, column: int, message: str):
        super().__init__(f"line {line}:{column}: {message}")
        self.line = line
        self.column = column
        self.message = message


@cache
def _parser() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def _words(expected: set[str] | frozenset[str]) -> str:
    names = sorted({TERMINAL_WORDS.get(e, e.lower().replace("setting_", "")) for e in expected})
    return ", ".join(names)


def _position(token: Token | Tree[Any]) -> tuple[int, int]:
    if isinstance(token, Token):
        return token.line or 1, token.column or 1
    return token.meta.line, token.meta.column


def parse(source: str) -> ast.Program:
    """Parse and check a DSL source; raises DslError on the first problem."""
    try:
        tree = _parser().parse(source + "\n")
    except UnexpectedEOF as exc:
        lines = source.splitlines() or [""]
        raise DslError(
            len(lines), len(lines[-1]) + 1, f"unexpected end, expected {_words(set(exc.expected))}"
        ) from None
    except UnexpectedToken as exc:
        token = exc.token
        seen = (
            "the end of the source"
            if token.type == "$END"
            else repr(str(token).strip() or "new line")
        )
        raise DslError(
            exc.line, exc.column, f"unexpected {seen}, expected {_words(exc.expected)}"
        ) from None
    except UnexpectedCharacters as exc:
        at = exc.pos_in_stream or 0
        char = source[at] if at < len(source) else ""
        expected = _words(exc.allowed) if exc.allowed else "something else"
        raise DslError(exc.line, exc.column, f"unexpected {char!r}, expected {expected}") from None
    except UnexpectedInput as exc:  # any other lark complaint still has a place
        raise DslError(exc.line, exc.column, str(exc).splitlines()[0]) from None
    _refuse_deep(tree)
    try:
        return _Build(source).build(tree)
    except VisitError as exc:  # a check inside the transformer: lark wraps what it raised
        if isinstance(exc.orig_exc, DslError):
            raise exc.orig_exc from None
        raise


MAX_DEPTH = 60  # levels of nesting of one rule's tree (parentheses, operators, calls)


def _refuse_deep(tree: Tree[Token]) -> None:
    """Refuse a tree deeper than MAX_DEPTH before anything recursive walks it (building the
    AST, evaluating): `- - - … close` or `close + close + …` thousands long would exhaust the
    stack. Walked with a stack of its own."""
    pending: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > MAX_DEPTH:
            line, column = _position(node)
            raise DslError(
                line,
                column,
                f"this rule nests more than {MAX_DEPTH} levels deep; split it into smaller rules",
            )
        pending.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


class _Build(Transformer[Token, Any]):
    """Turns lark's tree into the AST, checking names, arguments, types and limits."""

    def __init__(self, source: str):
        super().__init__()
        self.lines = source.splitlines()

    def build(self, tree: Tree[Token]) -> ast.Program:
        items = cast(list[Any], self.transform(tree).children)
        settings: dict[str, Any] = {}
        rules: list[ast.Rule] = []
        for item in items:
            if isinstance(item, ast.Rule):
                rules.append(item)
            else:
                key, value, (line, column) = item
                if key in settings:
                    raise DslError(line, column, f"{key} is set twice")
                settings[key] = value
        if not rules:
            raise DslError(
                len(self.lines) or 1, 1, "a strategy needs at least one 'when … then …' rule"
            )
        if len(rules) > MAX_RULES:
            raise DslError(rules[MAX_RULES].line, 1, f"at most {MAX_RULES} rules")
        return ast.Program(rules=tuple(rules), **settings)

    # -- settings ----------------------------------------------------------------------------

    def _setting(self, key: str, value: Any, token: Token) -> tuple[str, Any, tuple[int, int]]:
        return key, value, _position(token)

    def set_symbol(self, children: list[Token]) -> Any:
        return self._setting("symbol", str(children[1]).upper(), children[0])

    def set_timeframe(self, children: list[Token]) -> Any:
        return self._setting("timeframe", str(children[1]).lower(), children[0])

    def set_leverage(self, children: list[Token]) -> Any:
        value = float(children[1])
        if not value.is_integer() or not 1 <= value <= 125:
            raise DslError(*_position(children[1]), "leverage is a whole number from 1 to 125")
        return self._setting("leverage", int(value), children[0])

    def set_size(self, children: list[Any]) -> Any:
        return self._setting("size", children[1], children[0])

    def _percent(self, key: str, children: list[Token]) -> Any:
        value = float(children[1])
        if not 0 < value <= 100:
            raise DslError(
                *_position(children[1]), f"{key} is a percentage above 0 and at most 100"
            )
        return self._setting(key, value, children[0])

    def set_stop_loss(self, children: list[Token]) -> Any:
        return self._percent("stop_loss_pct", children)

    def set_take_profit(self, children: list[Token]) -> Any:
        return self._percent("take_profit_pct", children)

    def set_trailing_stop(self, children: list[Token]) -> Any:
        return self._percent("trailing_stop_pct", children)

    # -- rules and actions -------------------------------------------------------------------

    @v_args(meta=True)
    def rule(self, meta: Any, children: list[Any]) -> ast.Rule:
        condition, actions = children[1], tuple(children[3:])
        where = (meta.line, meta.column)
        if not _is_condition(condition):
            raise DslError(
                *where,
                "the part between 'when' and 'then' must be true or false "
                "(a comparison, a cross, and/or/not)",
            )
        if _count_conditions(condition) > MAX_CONDITIONS:
            raise DslError(*where, f"at most {MAX_CONDITIONS} conditions in one rule")
        text = (
            self.lines[meta.line - 1].split("#", 1)[0].strip()
            if meta.line <= len(self.lines)
            else ""
        )
        return ast.Rule(meta.line, text, condition, actions)

    def entry(self, children: list[Any]) -> ast.Entry:
        word = str(children[0]).lower()
        return ast.Entry("long" if word in ("buy", "long") else "short", children[1])

    def exit(self, children: list[Any]) -> ast.Exit:
        which = str(children[1]).lower() if children[1] is not None else "all"
        return ast.Exit(cast(ast.CloseWhich, which))

    def size(self, children: list[Token]) -> ast.Size:
        amount, unit = float(children[0]), cast(ast.SizeUnit, str(children[1]).lower())
        if amount <= 0 or (unit == "%" and amount > 100):
            raise DslError(*_position(children[0]), "a size is above 0 (and at most 100 %)")
        return ast.Size(amount, unit)

    # -- conditions and expressions ----------------------------------------------------------

    def or_op(self, children: list[Any]) -> ast.Logic:
        return ast.Logic(
            "or", self._cond(children[0], children[1]), self._cond(children[2], children[1])
        )

    def and_op(self, children: list[Any]) -> ast.Logic:
        return ast.Logic(
            "and", self._cond(children[0], children[1]), self._cond(children[2], children[1])
        )

    def not_op(self, children: list[Any]) -> ast.Not:
        return ast.Not(self._cond(children[1], children[0]))

    def compare(self, children: list[Any]) -> ast.Compare:
        op = cast(Any, str(children[1]))
        return ast.Compare(
            op, self._expr(children[0], children[1]), self._expr(children[2], children[1])
        )

    def cross(self, children: list[Any]) -> ast.Cross:
        direction = cast(Any, str(children[2]).lower())
        return ast.Cross(
            direction, self._expr(children[0], children[1]), self._expr(children[3], children[1])
        )

    def binop(self, children: list[Any]) -> ast.Arithmetic:
        op = cast(Any, str(children[1]))
        return ast.Arithmetic(
            op, self._expr(children[0], children[1]), self._expr(children[2], children[1])
        )

    def neg(self, children: list[Any]) -> ast.Expr:
        operand = children[0]
        if isinstance(operand, ast.Number):
            return ast.Number(-operand.value)
        if not _is_expr(operand):
            raise DslError(1, 1, "'-' applies to a number or a series")
        return ast.Negate(operand)

    def number(self, children: list[Token]) -> ast.Number:
        return ast.Number(float(children[0]))

    def series(self, children: list[Token]) -> ast.Column:
        name = str(children[0]).lower()
        if name not in SERIES:
            hint = (
                " (an indicator needs its arguments, e.g. sma(20))" if _function_name(name) else ""
            )
            raise DslError(
                *_position(children[0]),
                f"unknown series {name!r}{hint}; use open, high, low, close, volume or price",
            )
        return ast.Column(cast(ast.Series, SERIES[name]))

    def call(self, children: list[Any]) -> ast.Expr | ast.Cross:
        name_token, args = children[0], [a for a in children[1:] if a is not None]
        name, where = str(name_token).lower(), _position(name_token)
        if name in CROSS_FUNCTIONS:
            if len(args) != 2 or not all(_is_expr(a) for a in args):
                raise DslError(*where, f"{name}(a, b) takes two series")
            return ast.Cross(cast(Any, CROSS_FUNCTIONS[name]), args[0], args[1])
        function = _function_name(name)
        if function is None:
            known = ", ".join(sorted(FUNCTIONS))
            raise DslError(
                *where,
                f"unknown function {name!r}; the functions are {known}, crossover, crossunder",
            )
        return _indicator(function, args, where)

    def _cond(self, value: Any, token: Token) -> ast.Cond:
        if not _is_condition(value):
            raise DslError(
                *_position(token), f"both sides of {str(token).lower()!r} must be true or false"
            )
        return cast(ast.Cond, value)

    def _expr(self, value: Any, token: Token) -> ast.Expr:
        if not _is_expr(value):
            raise DslError(
                *_position(token), f"both sides of {str(token).lower()!r} must be numbers or series"
            )
        return cast(ast.Expr, value)


def _function_name(name: str) -> str | None:
    name = ALIASES.get(name, name)
    return name if name in FUNCTIONS else None


def _indicator(function: str, args: list[Any], where: tuple[int, int]) -> ast.Indicator:
    spec = FUNCTIONS[function]
    source: ast.Expr | None = None
    if spec.takes_source and args and not isinstance(args[0], ast.Number):
        source = args.pop(0)
        if not _is_expr(source):
            raise DslError(*where, f"{function}'s first argument is a series")
    elif spec.takes_source:
        source = ast.Column("close")  # default series
    if len(args) > len(spec.numbers) or not all(isinstance(a, ast.Number) for a in args):
        names = ", ".join(name for name, _ in spec.numbers)
        raise DslError(
            *where,
            f"{function} takes {'[series, ] ' if spec.takes_source else ''}{names} "
            "as plain numbers",
        )
    numbers: list[float] = []
    for index, (name, default) in enumerate(spec.numbers):
        value = args[index].value if index < len(args) else default
        if value is None:
            raise DslError(*where, f"{function} needs its {name}, e.g. {function}(20)")
        if name in spec.periods and (not float(value).is_integer() or not 1 <= value <= MAX_PERIOD):
            raise DslError(*where, f"{function}'s {name} is a whole number from 1 to {MAX_PERIOD}")
        numbers.append(float(value))
    return ast.Indicator(function, source, tuple(numbers))


def _is_expr(value: Any) -> bool:
    return isinstance(value, ast.Number | ast.Column | ast.Indicator | ast.Arithmetic | ast.Negate)


def _is_condition(value: Any) -> bool:
    return isinstance(value, ast.Compare | ast.Cross | ast.Logic | ast.Not)


def _count_conditions(cond: ast.Cond) -> int:
    if isinstance(cond, ast.Logic):
        return _count_conditions(cond.left) + _count_conditions(cond.right)
    if isinstance(cond, ast.Not):
        return _count_conditions(cond.operand)
    return 1
