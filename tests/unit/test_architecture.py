"""The tree is the architecture (docs/development.md): the rules import-linter cannot
express (its layer contracts run beside the suite, in `.ci/run`). A change that breaks
one fails here, not in review."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "kbase_ci"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[ast.ImportFrom | ast.Import, bool]]:
    """Every import statement of a module, and whether it sits inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function
            yield from visit(child, inner)

    for node, in_function in visit(ast.parse(path.read_text(encoding="utf-8")), False):
        if isinstance(node, ast.ImportFrom) and node.level:  # made absolute for the graph
            base = package.split(".")[:len(package.split(".")) - node.level + 1]
            node.module = ".".join([*base, *([node.module] if node.module else [])])
            node.level = 0
        assert isinstance(node, ast.Import | ast.ImportFrom)
        yield node, in_function


@functools.cache
def _imports_of(name: str) -> tuple[tuple[ast.ImportFrom | ast.Import, bool], ...]:
    """`_imports` of a module, parsed once for the three tests that read them."""
    return tuple(_imports(name, MODULES[name]))


def _targets(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    module = node.module or ""
    return [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
            for a in node.names]


def test_package_root_holds_only_leaves() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 6, root


QUERY_TOOLS_CLASHES = frozenset({"compare", "concepts", "context", "explore", "gaps", "graph",
                                 "links", "read", "search", "status"})
"""Basenames that `kbase_ci/query/X.py` and `kbase_ci/query/tools/X.py` share today: the
query/tools fold (issue 41 item 2, another branch) moves each tools module into its
query's module and so removes these. Nothing else may share a name."""


def test_module_basenames_are_unique() -> None:
    """A jump-to-file lands on the module meant: no two modules of kbase_ci share a file
    name, so a name says its layer where two layers own alike nouns (`indexbuild`,
    `scopebuild`). CHANGELOG.md lists the renames that made them so."""
    where: dict[str, list[str]] = {}
    for path in MODULES.values():
        if path.name != "__init__.py":
            where.setdefault(path.stem, []).append(path.relative_to(REPO).as_posix())
    clashes = {stem: paths for stem, paths in where.items() if len(paths) > 1}
    allowed = {stem: paths for stem, paths in clashes.items() if stem in QUERY_TOOLS_CLASHES
               and sorted(paths) == sorted([f"kbase_ci/query/tools/{stem}.py",
                                            f"kbase_ci/query/{stem}.py"])}
    assert clashes == allowed, {s: p for s, p in clashes.items() if s not in allowed}


def test_no_import_cycles() -> None:
    graph = {name: sorted({t for node, _ in _imports_of(name) for t in _targets(node)
                           if t in MODULES and t != name})
             for name, path in MODULES.items()}
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt):], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for name in graph:
        if name not in state:
            walk(name)


def test_lazy_imports_of_our_modules_say_why() -> None:
    """An import inside a function hides a cycle or costs start-up nobody sees; each one
    left (a hook or `--help` that must not load a layer) carries a comment saying why."""
    bare = []
    for name, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node, in_function in _imports_of(name):
            if not in_function or not any(t.startswith("kbase_ci") for t in _targets(node)):
                continue
            said = any("#" in lines[i] for i in range(node.lineno - 1, node.end_lineno or 0))
            i = node.lineno - 2
            while not said and i >= 0:  # a comment above the block of imports it heads
                text = lines[i].strip()
                if text.startswith("#"):
                    said = True
                elif text.startswith(("from ", "import ")):
                    i -= 1
                    continue
                break
            if not said:
                bare.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not bare, bare


def test_only_the_git_package_starts_processes() -> None:
    users = sorted(name for name, path in MODULES.items()
                   for node, _ in _imports_of(name)
                   if "subprocess" in _targets(node) and not name.startswith("kbase_ci.git."))
    assert users == [], users


def test_development_doc_shows_the_tree() -> None:
    from tests.layout import BEGIN, END, render

    doc = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    shown = doc[doc.index(BEGIN):doc.index(END) + len(END)]
    assert shown == render(), "regenerate with `python -m tests.layout`"


def _renames(tree: ast.AST) -> Iterator[int]:
    """Lines that rename a file: `os.replace`/`os.rename`/`os.renames`, `shutil.move`,
    and the `Path` methods `.rename(x)` and `.replace(x)` (one argument, no keywords:
    `str.replace` and `bytes.replace` take two, `dataclasses.replace` keywords)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, owner = node.func.attr, node.func.value
        named = owner.id if isinstance(owner, ast.Name) else ""
        spelled = (named, attr) in {("os", "replace"), ("os", "rename"), ("os", "renames"),
                                    ("shutil", "move")}
        path_method = attr == "rename" or (
            attr == "replace" and named not in ("os", "dataclasses")
            and len(node.args) == 1 and not node.keywords)
        if spelled or path_method:
            yield node.lineno


def test_only_the_state_package_renames_files() -> None:
    """One home for renaming into place (kbase_ci.state.files): import-linter sees
    imports, not calls, so the calls are looked for here."""
    found = [f"{path.relative_to(REPO)}:{line}" for name, path in MODULES.items()
             if not name.startswith("kbase_ci.state")
             for line in _renames(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], found


def test_the_rename_finder_sees_each_spelling() -> None:
    code = ("os.replace(a, b)\nos.rename(a, b)\nshutil.move(a, b)\np.rename(q)\n"
            "p.replace(q)\ns.replace('a', 'b')\ndataclasses.replace(x, y=1)\n"
            "replace(x, y=1)\n")
    assert sorted(_renames(ast.parse(code))) == [1, 2, 3, 4, 5]


def test_only_the_state_package_downloads() -> None:
    """`urllib.request` (a submodule import-linter cannot tell from `urllib.parse`) only
    in kbase_ci.state and the GitHub REST client, which downloads nothing to disk."""
    users = sorted(name for name, path in MODULES.items()
                   for node, _ in _imports(name, path)
                   if any(t == "urllib.request" or t.startswith("urllib.request.")
                          for t in _targets(node))
                   and not name.startswith("kbase_ci.state"))
    assert users == ["kbase_ci.ci.github"], users
