"""The house's layering holds: the import-linter contracts in pyproject.toml, no import cycle,
and no module or function longer than a reader can hold (issue 27).

Both read the import graph that grimp builds from the source, which counts imports inside
functions and under TYPE_CHECKING, so a cycle hidden behind a late import still fails here.
Run this file as a script (`python tests/test_architecture.py`) to print today's cycles.
"""

import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "core", "catalog", "inventory", "planner", "monitoring", "benchmarks")


MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 120


def _sources() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    )


def long_modules() -> set[str]:
    """Modules (outside migrations) over MAX_MODULE_LINES lines."""
    return {
        str(path.relative_to(ROOT))
        for path in _sources()
        if path.read_text().count("\n") > MAX_MODULE_LINES
    }


def long_functions() -> set[str]:
    """Functions and methods over MAX_FUNCTION_LINES lines, as path:name."""
    found = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
            ):
                found.add(f"{path.relative_to(ROOT)}:{node.name}")
    return found


def module_cycles() -> list[frozenset[str]]:
    """Every group of the project's modules that import each other, directly or around a ring."""
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)
    # Tarjan's strongly connected components, iterative: deep chains cannot hit the recursion limit.
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[frozenset[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = lowlink[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step_down = next((m for m in imported if m not in index or m in on_stack), None)
            if step_down is not None and step_down not in index:
                index[step_down] = lowlink[step_down] = len(index)
                stack.append(step_down)
                on_stack.add(step_down)
                work.append(
                    (step_down, iter(sorted(graph.find_modules_directly_imported_by(step_down))))
                )
                continue
            if step_down is not None:
                lowlink[module] = min(lowlink[module], index[step_down])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                lowlink[parent] = min(lowlink[parent], lowlink[module])
            if lowlink[module] == index[module]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(frozenset(group))
    return groups


def test_import_contracts_hold():
    # In its own process: import-linter's command reconfigures logging, which silenced the
    # loggers of modules imported before it for every test that ran after it in this process.
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "lint-imports"),
            "--config=pyproject.toml",
            "--no-cache",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_no_import_cycle():
    assert module_cycles() == []


def test_no_module_grows_past_the_limit():
    assert long_modules() == set(), f"split these below {MAX_MODULE_LINES} lines"


def test_no_function_grows_past_the_limit():
    assert long_functions() == set(), f"split these below {MAX_FUNCTION_LINES} lines"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    found = module_cycles()
    print(f"{len(found)} import cycles")
    for cycle in found:
        print(f"  {len(cycle)} modules: {', '.join(sorted(cycle))}")
    print(f"modules over {MAX_MODULE_LINES} lines: {sorted(long_modules())}")
    print(f"functions over {MAX_FUNCTION_LINES} lines: {sorted(long_functions())}")
