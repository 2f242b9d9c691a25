"""The kernel stays pure: standard library, sortedcontainers, papertrade.kit and itself only."""

import ast
import sys
from pathlib import Path

import pytest

import papertrade.trading

KERNEL = Path(papertrade.trading.__file__).parent
ALLOWED_PREFIXES = ("papertrade.kit", "papertrade.trading", "sortedcontainers")
IO_MODULES = {"asyncio", "io", "os", "pathlib", "socket", "subprocess", "shutil", "sqlite3"}


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("path", sorted(KERNEL.glob("*.py")), ids=lambda p: p.name)
def test_kernel_imports(path: Path) -> None:
    for module in imported_modules(path):
        top = module.split(".")[0]
        if module.startswith(ALLOWED_PREFIXES):
            continue
        assert top in sys.stdlib_module_names, f"{path.name} imports {module}"
        assert top not in IO_MODULES, f"{path.name} imports I/O module {module}"


@pytest.mark.parametrize("path", sorted(KERNEL.glob("*.py")), ids=lambda p: p.name)
def test_kernel_files_stay_small(path: Path) -> None:
    assert len(path.read_text().splitlines()) < 400
