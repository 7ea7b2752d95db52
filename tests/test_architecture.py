"""The house's layering holds: the import-linter contracts in pyproject.toml, and no import cycle.

Both read the import graph that grimp builds from the source, which counts imports inside
functions and under TYPE_CHECKING, so a cycle hidden behind a late import still fails here.
Run this file as a script (`python tests/test_architecture.py`) to print today's cycles.
"""

import sys
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "core", "catalog", "inventory", "planner", "monitoring", "benchmarks")

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
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_no_import_cycle():
    assert module_cycles() == []


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    found = module_cycles()
    print(f"{len(found)} import cycles")
    for cycle in found:
        print(f"  {len(cycle)} modules: {', '.join(sorted(cycle))}")
