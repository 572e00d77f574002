"""Layers import downward only, and no two packages import each other.

From the bottom: primitives (errors, contracts, bit tables, fast division, data files, the
cache folder, resources, positions, graphs and their distances, figures
and their SVG renderer, lazy names, compiled code and the calibration's rates); algorithms (``search``, ``explore``: no family, no pattern database); families
and what is specific to them (``families``, ``pdb``); planning and its products
(``solver``, ``optimal``, ``batch``, ``registry``, ``pages``, ``plot``, ``play``, ``warmup``); the
command line (``cli``; ``cliparse``, how it reads its arguments; ``cliprint``, how it
shows what it does).
Every import counts, those inside functions too.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "puzzlespace"

LAYERS = [
    {"errors", "_version", "contracts", "fastdiv", "datafile", "bits", "cache", "resources", "positions", "graphs",
     "distances", "drawing", "render", "lazy", "compiled", "calibration"},
    {"search", "explore"},
    {"families", "pdb"},
    {"solver", "optimal", "batch", "registry", "pages", "plot", "play", "warmup"},
    {"cli", "cliparse", "cliprint", "web", "__main__", "__init__"},
]
LEVEL = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """The layer unit of ``puzzlespace.a.b``: its top-level module or package ``a``."""
    return module.split(".")[1] if module.count(".") else "__init__"


def imports(path: Path) -> set[str]:
    """Every puzzlespace module that ``path`` imports (absolute names)."""
    module = "puzzlespace." + ".".join(path.relative_to(SRC).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    if module.endswith(".__init__"):
        package = module = module[: -len(".__init__")]
    found = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):  # imports for type checkers only make no dependency at run time
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            targets = [name] if node.module else [f"{name}.{a.name}" for a in node.names]
            found.update(t for t in targets if t.startswith("puzzlespace"))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("puzzlespace"))
    return found


MODULES = sorted(p for p in SRC.rglob("*.py"))


def test_every_module_is_in_a_layer():
    units = {unit_of("puzzlespace." + ".".join(p.relative_to(SRC).with_suffix("").parts)) for p in MODULES}
    assert units <= set(LEVEL), units - set(LEVEL)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(SRC)) for p in MODULES])
def test_imports_go_downward(path):
    mine = unit_of("puzzlespace." + ".".join(path.relative_to(SRC).with_suffix("").parts))
    for target in imports(path):
        theirs = unit_of(target)
        assert LEVEL[theirs] <= LEVEL[mine], f"{path.relative_to(SRC)} ({mine}) imports {target} ({theirs})"


def test_no_two_packages_import_each_other():
    edges = set()
    for path in MODULES:
        mine = unit_of("puzzlespace." + ".".join(path.relative_to(SRC).with_suffix("").parts))
        edges.update((mine, unit_of(t)) for t in imports(path) if unit_of(t) != mine)
    cycles = sorted((a, b) for a, b in edges if (b, a) in edges and a < b)
    assert not cycles, cycles


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    """The rule can fail: an algorithm that imports a family is caught."""
    fake = SRC / "search" / "bfs.py"
    found = imports(fake)
    assert "puzzlespace.contracts" in found
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: "from ..families import sliding\n")
    assert imports(fake) == {"puzzlespace.families"}
    with pytest.raises(AssertionError, match="imports puzzlespace.families"):
        test_imports_go_downward(fake)


def test_imports_for_type_checkers_only_are_not_dependencies(monkeypatch):
    fake = SRC / "search" / "bfs.py"
    text = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..families import sliding\nfrom .. import errors\n"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: text)
    assert imports(fake) == {"puzzlespace.errors"}
