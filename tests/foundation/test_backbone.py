"""The backbone's rules hold in the source: one function writes balances, one writes order
state, services never commit nor call up into the engine or a surface, and the process context
knows no domain package (docs/architecture.md)."""

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import papertrade

SOURCE = Path(papertrade.__file__).parent
BALANCE_WRITER = SOURCE / "ledger" / "service.py"
ORDER_STATE_WRITER = SOURCE / "orders" / "lifecycle.py"
ORDER_STATE = {"status", "is_open"}
BALANCE_HOLDERS = ("Portfolio", "Wallet", "values")  # a wallet is booked by post_wallet
# What the process context may know: the backbone (docs/architecture.md). Every other package,
# a new area included, is a domain package or a surface.
BACKBONE_PACKAGES = {"kit", "auth", "market", "outbox", "models", "migrations"}
DOMAIN_PACKAGES = {path.parent.name for path in SOURCE.glob("*/__init__.py")} - BACKBONE_PACKAGES


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SOURCE.rglob("*.py")):
        if "migrations" not in path.parts:
            yield path, ast.parse(path.read_text(), str(path))


def _assigned_attributes(tree: ast.Module) -> Iterator[tuple[ast.Attribute, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute):
                    yield part, node.lineno


def _called(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def test_only_the_ledger_changes_a_balance() -> None:
    offenders = []
    for path, tree in _modules():
        if path == BALANCE_WRITER:
            continue
        for attribute, line in _assigned_attributes(tree):
            if attribute.attr == "balance":
                offenders.append(f"{path.relative_to(SOURCE)}:{line}")
        # Portfolio(balance=…), Wallet(balance=…) or update(…).values(balance=…)
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or _called(call) not in BALANCE_HOLDERS:
                continue
            for keyword in call.keywords:
                starts_empty = isinstance(keyword.value, ast.Name) and keyword.value.id == "ZERO"
                if keyword.arg == "balance" and not starts_empty:
                    offenders.append(f"{path.relative_to(SOURCE)}:{call.lineno}")
    assert offenders == [], "balances change through ledger.service.post only"


def test_only_the_order_lifecycle_changes_an_orders_state() -> None:
    offenders = []
    for path, tree in _modules():
        if path == ORDER_STATE_WRITER:
            continue
        for attribute, line in _assigned_attributes(tree):
            named = attribute.value
            is_order = isinstance(named, ast.Name) and "order" in named.id
            if attribute.attr in ORDER_STATE and is_order:
                offenders.append(f"{path.relative_to(SOURCE)}:{line}")
    assert offenders == [], "order state changes through orders.lifecycle.transition only"


def test_the_process_context_imports_no_domain_package() -> None:
    tree = ast.parse((SOURCE / "context.py").read_text())
    imported = {
        node.module.split(".")[1]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("papertrade.")
    }
    assert {"ledger", "live", "orders", "strategies"} <= DOMAIN_PACKAGES  # the list is found
    assert imported & DOMAIN_PACKAGES == set()


def test_every_new_order_comes_from_the_one_factory() -> None:
    """Orders are made by orders.lifecycle.new_order, liquidations included: nothing else builds
    an Order, or an OrderRecord other than from a row read back (`OrderRecord(**row)`)."""
    offenders = []
    for path, tree in _modules():
        if path == ORDER_STATE_WRITER:
            continue
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or _called(call) not in ("Order", "OrderRecord"):
                continue
            from_a_row = not call.args and [k.arg for k in call.keywords] == [None]
            if not from_a_row:
                offenders.append(f"{path.relative_to(SOURCE)}:{call.lineno}")
    assert offenders == [], "build orders with orders.lifecycle.new_order"
    liquidation = ast.parse((SOURCE / "engine" / "risk.py").read_text())
    assert any(
        isinstance(call, ast.Call) and _called(call) == "new_order"
        for call in ast.walk(liquidation)
    )


# The one place a transaction ends (the unit of work), and the engine leader's lock, which is
# held on a connection of its own and is no unit of work.
COMMITTERS = {SOURCE / "db.py", SOURCE / "engine" / "leader.py"}
SURFACES = {"engine", "fapi", "v1", "web", "ws"}  # what services must not call up into


def test_services_never_commit() -> None:
    offenders = [
        f"{path.relative_to(SOURCE)}:{call.lineno}"
        for path, tree in _modules()
        if path not in COMMITTERS
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and _called(call) == "commit"
    ]
    assert offenders == [], "a service adds to the unit of work it is handed; its owner commits"


def test_services_never_call_up_into_the_engine_or_a_surface() -> None:
    services = [
        path
        for path in SOURCE.glob("*/service.py")
        if path.parent.name not in SURFACES  # ws/service.py is the WebSocket surface itself
    ]
    assert len(services) >= 20  # the walk found them
    offenders = []
    for path in services:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                named = [parts[1]] if len(parts) > 1 else [a.name for a in node.names]
                if parts[0] == "papertrade" and SURFACES & set(named):
                    offenders.append(f"{path.relative_to(SOURCE)}: {node.module}")
    assert offenders == []


def test_the_architecture_page_names_every_package() -> None:
    """docs/architecture.md is how a new area finds its place: its tree leaves no package out."""
    page = (SOURCE.parents[1] / "docs" / "architecture.md").read_text()
    tree = page.split("## The tree", 1)[1].split("```")[1]
    packages = {
        path.name for path in SOURCE.iterdir() if path.is_dir() and path.name != "__pycache__"
    }
    named = set(re.findall(r"(?<![\w/])(\w+)/", tree))
    unnamed = sorted(packages - named)
    assert unnamed == [], f"docs/architecture.md's tree does not name {unnamed}"


def test_no_code_waits_with_asyncio_wait_for() -> None:
    """Python 3.11's `asyncio.wait_for` drops a cancellation that arrives together with the
    awaited result: a background loop waiting with it may never stop, and the process's stop
    hangs (tests/outbox/test_stop.py). `asyncio.timeout` does not; the code uses it."""
    offenders = [
        f"{path.relative_to(SOURCE)}:{call.lineno}"
        for path, tree in _modules()
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and _called(call) == "wait_for"
    ]
    assert offenders == [], "use `async with asyncio.timeout(…)` instead"


def test_no_code_stops_a_task_by_swallowing_cancellation() -> None:
    """`with suppress(CancelledError): await task` after `task.cancel()` also swallows a
    cancellation of the caller, which then goes on as if never asked to stop (a shutdown that
    does not end). `kit.tasks.cancel_and_wait` tells the two apart; the code uses it."""
    offenders = [
        f"{path.relative_to(SOURCE)}:{call.lineno}"
        for path, tree in _modules()
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and _called(call) == "suppress"
        and any(
            isinstance(arg, ast.Attribute) and arg.attr == "CancelledError" for arg in call.args
        )
    ]
    assert offenders == [], "use `await kit.tasks.cancel_and_wait(task)` instead"
