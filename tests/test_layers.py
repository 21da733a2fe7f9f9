"""The core's architecture stays as documented: no import circles between its modules, and
the layer map at the top of lib.rs lists them so that each uses only those before it."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "crates" / "fabricsim-core" / "src"


def dependencies() -> dict[str, set[str]]:
    """Top-level module -> the top-level modules its non-test code names (`crate::x`)."""
    deps: dict[str, set[str]] = {}
    for path in SRC.rglob("*.rs"):
        top = path.relative_to(SRC).parts[0].removesuffix(".rs")
        if top == "lib" or path.name == "tests.rs":  # a module of tests only
            continue
        code = path.read_text().split("#[cfg(test)]")[0]
        names = set(re.findall(r"\$?crate::(\w+)", code)) - {top}
        deps.setdefault(top, set()).update(names)
    return deps


def circles(deps: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports `a -> b` of `deps` where `b` reaches back to `a`, directly or not."""

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for d in deps.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    return sorted((a, b) for a in deps for b in deps[a] if a in reach(b))


def test_no_import_circles():
    found = circles(dependencies())
    assert not found, f"modules that import each other (directly or not): {found}"


def test_the_layer_map_in_lib_rs_matches_the_imports():
    doc = (SRC / "lib.rs").read_text().split("## Layers, bottom up")[1].split("A user touches")[0]
    order = re.findall(r"\[`(\w+)`\]", doc)
    deps = dependencies()
    layered = [m for m in order if m in deps]
    assert set(layered) == set(deps), f"every module is in the map once: {sorted(set(deps) ^ set(layered))}"
    for i, module in enumerate(layered):
        later = deps[module] & set(layered[i + 1 :])
        assert not later, f"{module} uses {sorted(later)}, listed after it in lib.rs"


def test_no_rust_source_file_over_500_lines():
    long = {
        str(p.relative_to(SRC.parent.parent)): n for p in SRC.parent.parent.rglob("*.rs") if (n := len(p.read_text().splitlines())) > 500
    }
    assert not long, f"split these by concern: {long}"


CLI = Path(__file__).resolve().parent.parent / "python" / "fabricsim" / "cli"


def test_the_command_line_is_a_module_a_command_in_two_layers():
    """`fabricsim.cli` (issue 63 item 4): one module a command, each using only the frame
    (`common`) and what the commands print (`printer`); `printer` uses only `common`, `common`
    none of them; no file over 500 lines."""
    allowed = {"common": set(), "printer": {"common"}, "__init__": None}
    for path in sorted(CLI.glob("*.py")):
        text = path.read_text()
        assert len(text.splitlines()) <= 500, f"{path.name}: {len(text.splitlines())} lines"
        mine = set(re.findall(r"^from \.(\w+) import|^from \. import (\w+)", text, re.M))
        used = {a or b for a, b in mine}
        may = allowed.get(path.stem, {"common", "printer"})
        if may is not None:
            assert used <= may, f"{path.name} imports {sorted(used - may)} of fabricsim.cli"


PACKAGE = CLI.parent


def python_imports() -> dict[str, set[str]]:
    """Module of python/fabricsim -> the modules of the package it imports when it runs (at its
    top or inside a function; an import under `if TYPE_CHECKING:` only names types)."""
    import ast

    modules = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p for p in PACKAGE.rglob("*.py")}
    modules["fabricsim._core"] = PACKAGE / "_core.pyi"
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text())
        typing_only = {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for stmt in block.body
            for n in ast.walk(stmt)
        }
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        used: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names]
                found = [s for s in subs if s in modules]
                used.update(found if len(found) == len(subs) or target not in modules else [*found, target])
            elif isinstance(node, ast.Import):
                used.update(a.name for a in node.names if a.name in modules)
        graph[name] = used - {name}
    return graph


def test_the_python_package_has_no_import_circle():
    """Issue 63 item 4: no module of python/fabricsim imports, directly or not, one that
    imports it (a function's import too: it runs)."""
    graph = python_imports()
    found = circles(graph)
    assert not found, f"modules that import each other (directly or not): {found}"
    assert "fabricsim.reproduce.sensitivity" in graph["fabricsim.reproduce.experiment"], "the imports were read"


def test_no_python_file_over_500_lines():
    """Issue 63 item 4: the package in rooms, no file over 500 lines (as the core's)."""
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 500}
    assert not long, f"split these by concern: {long}"
