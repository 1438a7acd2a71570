"""The house stays livable: no import cycle among app's modules (imports inside functions
count too: grimp reads them), a warning that names each file under app/ past 400 lines, and
no file past 600.

Past 400 lines a file is worth a look: does it hold more than one responsibility? The
warning names it and leaves the answer to a reader; a failure at 400 made code move to an
unrelated room only to pass (an About box in the providers dialog). 600 is the ceiling no
one responsibility needs.

The import-linter contracts in pyproject.toml (`lint-imports`) hold the layering between
rooms; this holds the finer rule, module by module."""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400
CEILING = 600


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """One cycle per strongly connected group of modules, as a path that ends where it starts."""
    imports = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    cycles = []
    for group in _strongly_connected(imports):
        if len(group) > 1 or group[0] in imports[group[0]]:
            cycles.append(_cycle_through(group, imports))
    return sorted(cycles)


def _strongly_connected(imports: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion (a long import chain must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(imports[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(imports.get(child, ()))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                groups.append(sorted(group))
    return groups


def _cycle_through(group: list[str], imports: dict[str, list[str]]) -> list[str]:
    """The shortest path from the group's first module back to itself, staying inside the group."""
    members = set(group)
    start = group[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for child in imports[module]:
                if child not in members or child in came_from:
                    continue
                came_from[child] = module
                if child == start:
                    path = [start]
                    while path[-1] != start or len(path) == 1:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                following.append(child)
        frontier = following
    raise AssertionError(f"no cycle inside {group}")


def test_no_import_cycle_among_app_modules():
    cycles = import_cycles(grimp.build_graph("app", cache_dir=None))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_the_cycle_finder_finds_cycles():
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.e", "p.e"),
                               ("p.f", "p.d")]:
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph) == [["p.a", "p.b", "p.c", "p.a"], ["p.e", "p.e"]]


def test_the_graph_sees_imports_inside_functions():
    graph = grimp.build_graph("app", cache_dir=None)
    # app.cli.gui imports the window only when it opens it.
    assert "app.gui.shell.application" in graph.find_modules_directly_imported_by("app.cli.gui")


def long_files(folder: Path, limit: int = MAX_LINES) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            with path.open("rb") as handle:
                count = sum(1 for _ in handle)
            if count > limit:
                found.append(f"{path.relative_to(folder.parent)}: {count} lines")
    return found


def test_a_file_past_400_lines_is_named_and_none_is_past_600():
    import warnings

    for line in long_files(ROOT / "app"):
        warnings.warn(f"{line}: does it hold more than one responsibility?", stacklevel=1)
    assert not long_files(ROOT / "app", CEILING), "split these by responsibility:\n" + "\n".join(
        long_files(ROOT / "app", CEILING))


def test_a_long_file_is_found(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_files(tmp_path / "pkg") == [f"{Path('pkg', 'long.py')}: {MAX_LINES + 1} lines"]
