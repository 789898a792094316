"""The folders are the architecture: each layer of the core imports only from the layers below it,
the core never imports a frontend (the command line, the dashboard), and nothing imports in a circle.

Layers, bottom up (docs/architecture.md): the base modules (errors, formatting, export, locations),
spec, counting, stats, the audit result, corrections, present, evidence. A test that reads every import, so a
shortcut taken up the layers or a new cycle fails here rather than in a code review.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = {"errors", "formatting", "export", "_locations", "_lazy", "__init__"}
LAYERS = {"spec": 1, "counting": 2, "stats": 3, "analyses": 4, "corrections": 5, "present": 6, "evidence": 7}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "luskin_core":
        return None
    if len(parts) == 1 or parts[1] in BASE:
        return 0
    return LAYERS.get(parts[1])


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module a file imports (relative imports resolved), with the line."""
    out = []
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:  # names for type hints only: no dependency when the code runs
            continue
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if not module:
                continue
            out.append((module, node.lineno))
            out += [(f"{module}.{a.name}", node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
    return out


def _core_files() -> list[Path]:
    return sorted((ROOT / "luskin_core").rglob("*.py"))


def test_every_core_module_sits_in_a_layer() -> None:
    loose = [_module_name(p) for p in _core_files() if _layer(_module_name(p)) is None]
    assert not loose, f"modules outside the layers of docs/architecture.md: {loose}"


def test_no_core_import_runs_up_the_layers() -> None:
    upward = []
    for path in _core_files():
        me = _module_name(path)
        mine = _layer(me)
        if me == "luskin_core":  # the package's lazy re-exports name every layer on purpose
            continue
        for target, line in _imports(path):
            theirs = _layer(target)
            if theirs is not None and mine is not None and theirs > mine:
                upward.append(f"{me}:{line} imports {target}")
    assert not upward, "imports running up the layers:\n" + "\n".join(upward)


def test_the_core_never_imports_a_frontend() -> None:
    found = [f"{_module_name(p)}:{line} imports {target}" for p in _core_files() for target, line in _imports(p)
             if target.split(".")[0] in ("luskin_cli", "luskin_app", "streamlit", "app_pages")]
    assert not found, "\n".join(found)


def _code_strings(path: Path) -> list[tuple[str, int]]:
    """The string literals a file's code uses (docstrings left out: they may name a frontend to explain)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.value, n.lineno) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


FRONTEND_FILES = ("luskin_app", "luskin_cli", "app_pages", "app.py")


def test_the_core_never_looks_for_a_frontends_files() -> None:
    """Finding the dashboard (find_spec("luskin_app"), "app.py") is the frontend's job (luskin_cli.app)."""
    assert [s for s, _ in _code_strings(ROOT / "luskin_cli" / "app.py") if any(f in s for f in FRONTEND_FILES)]
    found = [f"{_module_name(p)}:{line} {text!r}" for p in _core_files() for text, line in _code_strings(p)
             if any(f in text for f in FRONTEND_FILES)]
    assert not found, "\n".join(found)


def test_no_import_cycles_between_modules() -> None:
    # The dashboard's support package too: switching the data (which sets the choices and applies a waiting
    # configuration) sits above the dataset, the choices and the configuration (luskin_app.session).
    files = _core_files() + sorted((ROOT / "luskin_cli").rglob("*.py")) + sorted((ROOT / "luskin_app").rglob("*.py"))
    names = {_module_name(p): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        edges = set()
        for target, _ in _imports(path):
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + ".") and target.count(".") >= 1:
                edges.add(target)
        graph[name] = edges
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_test_imports_a_conftest_of_another_folder() -> None:
    """pytest loads both conftest files (tests/ and tests/browser/) under the one name ``conftest``; which one an
    ``import conftest`` finds depends on the order a worker collected them (CI's run failed so: a test in tests/
    found tests/browser/conftest.py). A test outside tests/browser reads shared helpers from the package instead."""
    found = sorted({f"{p.relative_to(ROOT)}:{line}" for p in (ROOT / "tests").glob("*.py")
                    for module, line in _imports(p) if module == "conftest" or module.startswith("conftest.")})
    assert not found, "\n".join(found)
