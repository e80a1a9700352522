"""The package's layering, enforced: each module imports only from its own layer or the layers below it.

Every import is checked, those inside functions included (a lazy import is still a dependency). Also: no
module imports the package root (``ggik/__init__.py`` is the public facade, above everything), no module
imports a private (underscore) name from another module or reaches into another module's private attributes,
no module is much longer than 400 lines, and no docstring or comment cites a file outside the repository.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ggik"

#: bottom to top; a module belongs to the first entry that is its name or a package above it
LAYERS: list[tuple[str, ...]] = [
    ("ggik.errors", "ggik.version", "ggik.fileio", "ggik.typed_config", "ggik.rng"),
    ("ggik.kinematics",),
    ("ggik.collision",),
    ("ggik.graph",),
    ("ggik.data",),
    ("ggik.nn",),
    ("ggik.checkpoint",),
    ("ggik.ik",),
    ("ggik.path",),
    ("ggik.baselines",),
    ("ggik.training",),
    ("ggik.solver",),  # the user's class: IK, paths and adaptation (GGIK.adapt) composed
    ("ggik.evaluation",),
    ("ggik.viewer",),
    ("ggik.cli",),
]
MAX_LINES = 420
#: the modules of ggik/evaluation: the suite behind ``ggik eval`` (and ``ggik demo``) and its helpers; a study goes to
#: benchmarks/STUDY/ instead (see benchmarks/README.md)
EVALUATION_SUITE = {
    "__init__",
    "conventions_table",
    "demo",
    "generalisation",
    "goal_kind_report",
    "goal_kind_table",
    "paper_protocol",
    "path_baselines",
    "path_benchmark",
    "path_plots",
    "path_suite",
    "plots",
    "report",
    "tables",
    "training_curves",
}
#: the lab's top-level package (benchmarks/ of the repository), which no module of ggik may import
LAB = "benchmarks"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(name: str) -> int:
    for level, members in enumerate(LAYERS):
        if any(name == m or name.startswith(m + ".") for m in members):
            return level
    raise KeyError(name)


def imported_modules(tree: ast.AST, name: str) -> list[tuple[int, str]]:
    """(line, ggik module) of every import in a module's tree, relative imports resolved."""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "ggik"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "ggik":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((node.lineno, sub if sub in MODULES else base))
    return out


def test_every_module_has_a_layer():
    missing = [
        m
        for m in MODULES
        if m != "ggik" and not any(m == x or m.startswith(x + ".") for layer in LAYERS for x in layer)
    ]
    assert not missing, f"modules outside every layer (add them to LAYERS): {missing}"


def test_evaluation_holds_only_the_suite():
    folder = PACKAGE / "evaluation"
    modules = {p.stem for p in folder.glob("*.py")}
    packages = [p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert not packages, f"ggik/evaluation has subpackages {packages}: the suite is flat"
    extra, gone = sorted(modules - EVALUATION_SUITE), sorted(EVALUATION_SUITE - modules)
    assert not extra, (
        f"ggik/evaluation/{extra} are not part of the suite behind `ggik eval`: a study goes to "
        "benchmarks/STUDY/ (not shipped); a new suite module goes into EVALUATION_SUITE"
    )
    assert not gone, f"EVALUATION_SUITE names {gone}, which do not exist (update the list)"


def lab_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of the lab (``benchmarks``) in a module's tree, imports in functions too."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == LAB]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == LAB:
            out.append((node.lineno, node.module))
    return out


@pytest.mark.parametrize("name", list(MODULES))
def test_nothing_in_ggik_imports_the_lab(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    bad = [f"line {line}: {module}" for line, module in lab_imports(tree)]
    assert not bad, f"{name} imports the lab, which is not shipped (move what it needs into ggik):\n" + "\n".join(bad)


def test_the_lab_check_sees_every_form_of_import():
    tree = ast.parse(
        "import benchmarks.common\nfrom benchmarks.cascade import x\ndef f():\n    from benchmarks import y\n"
        "from . import benchmarks\nimport benchmarks_other\n"
    )
    assert [line for line, _ in lab_imports(tree)] == [1, 2, 4]


@pytest.mark.parametrize("name", [m for m in MODULES if m != "ggik"])
def test_imports_follow_the_layers(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    mine = layer_of(name)
    bad = []
    for line, target in imported_modules(tree, name):
        if target == "ggik":
            bad.append(f"line {line}: imports the package root (the public facade); import the defining module")
        elif layer_of(target) > mine:
            bad.append(f"line {line}: {target} (layer {layer_of(target)}) is above {name} (layer {mine})")
    assert not bad, f"{name}:\n" + "\n".join(bad)


def own_private_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return {n for n in names if n.startswith("_")}


@pytest.mark.parametrize("name", list(MODULES))
def test_no_private_names_across_modules(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    own = own_private_names(tree)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ggik"):
            bad += [
                f"line {node.lineno}: imports {a.name} from {node.module}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if node.attr in own:
                continue  # this module's own private member (e.g. another instance of its class)
            if isinstance(base, ast.Name) and base.id in ("torch", "np", "sys", "os"):
                continue
            bad.append(f"line {node.lineno}: .{node.attr}")
    assert not bad, f"{name} uses private names of other modules:\n" + "\n".join(bad)


@pytest.mark.parametrize("name", list(MODULES))
def test_modules_stay_small(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most about 400: split it by job)"


@pytest.mark.parametrize("name", list(MODULES))
def test_nothing_cites_files_outside_the_repo(name):
    text = MODULES[name].read_text(encoding="utf-8")
    for outside in ("../shared", "ggik_spec", "model_notes", "robots.md", "bench_layers"):
        assert outside not in text, f"{name} cites {outside!r}, which users do not have: explain the reasoning instead"


def test_the_layering_test_sees_function_level_imports():
    tree = ast.parse("def f():\n    from ggik.cli import main\n")
    MODULES.setdefault("ggik.kinematics._probe", PACKAGE / "kinematics" / "_probe.py")
    try:
        assert (2, "ggik.cli") in imported_modules(tree, "ggik.kinematics._probe")
    finally:
        MODULES.pop("ggik.kinematics._probe")


@pytest.mark.parametrize("name", list(MODULES))
def test_dotted_references_in_docstrings_resolve(name):
    """Every ``ggik.x.y`` a module's text names in backticks exists (moved code leaves no dangling pointer)."""
    import importlib
    import re

    bad = []
    for ref in re.findall(r"`(ggik(?:\.[A-Za-z_]\w*)+)`", MODULES[name].read_text(encoding="utf-8")):
        parts = ref.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                obj = getattr(obj, attr, None)
            break
        if obj is None:
            bad.append(ref)
    assert not bad, f"{name} names {bad}, which do not exist"


def every_import(tree: ast.AST, name: str) -> set[str]:
    """The ggik modules ``name`` imports anywhere: at module level, in functions, and under ``if TYPE_CHECKING:``
    (an import for annotations only is still a dependency: the two modules cannot be read, tested or moved apart). A
    package stands for its ``__init__``; ``from ggik.a import b`` names the module ``ggik.a.b`` where it is one."""
    out = set()
    for _, module in imported_modules(tree, name):
        while module not in MODULES and "." in module:
            module = module.rpartition(".")[0]
        if module != name and module in MODULES:
            out.add(module)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the ggik modules it imports (:func:`every_import`), for every module of ggik/."""
    return {name: every_import(ast.parse(path.read_text(encoding="utf-8")), name) for name, path in MODULES.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph`` a depth-first search meets (each as ``a -> b -> ... -> a``); none: []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_import_cycles_inside_ggik():
    """No module imports a module that imports it back through any chain, counting every import: top-level,
    function-level and under ``TYPE_CHECKING`` (a cycle makes the import order matter and hides a layering fault;
    one hidden behind a lazy or an annotation-only import is still one)."""
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_check_sees_every_form_of_import():
    """The graph has the edges of a function-level and an annotation-only import, and the search finds a cycle
    through them (and none where there is none)."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ggik.graph.robot_graph import RobotGraph\n"
        "def f():\n    import ggik.kinematics.robot\n"
    )
    assert every_import(tree, "ggik.graph.angles") == {"ggik.graph.robot_graph", "ggik.kinematics.robot"}
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    graph = import_graph()
    assert "ggik.graph.robot_graph" in graph["ggik.graph.batch"]  # a module-level import, resolved to its module


MAX_PARAMETERS = 8  #: a function of ggik takes at most this many (self and cls not counted): objects, not lists


def test_no_function_takes_more_than_eight_parameters():
    """Long argument lists are hard to read and to call right: problem and config objects instead."""
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                names = names[1:] if names[:1] in (["self"], ["cls"]) else names
                count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
                if count > MAX_PARAMETERS:
                    long.append(f"{name}:{node.lineno} {node.name} ({count})")
    assert not long, "functions with more than 8 parameters:\n" + "\n".join(long)
