"""The source tree's own rules, read from the source (ast): no import cycle among the
modules of ``refmodels`` and ``fast``, no compiled function with more than 10 positional
arguments (their state is grouped in named records), no source file over 700 lines, no
probe of a problem's attributes in ``fast/`` (a family declares what it offers), and no
development-history notes (session or issue numbers) in the code."""
import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("refmodels", "fast")


def _modules():
    """``{dotted name: (path, is a package)}`` for every module of the packages."""
    out = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return out


def _import_graph(modules):
    """The modules each module imports when it is imported (statements at its top level,
    ``try`` blocks included; imports inside functions run later and cannot form a cycle
    at import time)."""
    graph = {}
    for name, (path, is_pkg) in modules.items():
        pkg = name.split(".") if is_pkg else name.split(".")[:-1]
        deps = set()
        for node in ast.parse(path.read_text()).body:
            for s in (node.body if isinstance(node, ast.Try) else [node]):
                if isinstance(s, ast.ImportFrom):
                    base = ".".join(pkg[:len(pkg) - s.level + 1] + ([s.module] if s.module
                                                                   else [])) \
                        if s.level else s.module
                    for a in s.names:
                        sub = f"{base}.{a.name}"
                        deps.add(sub if sub in modules else base)
                elif isinstance(s, ast.Import):
                    deps.update(a.name for a in s.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def _cycles(graph):
    found, state = [], {}

    def visit(u, stack):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v, stack)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u, [])
    return found


def test_no_import_cycle():
    cycles = _cycles(_import_graph(_modules()))
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def _sources(*dirs):
    return [p for d in dirs for p in sorted((ROOT / d).rglob("*.py"))]


def test_compiled_functions_take_at_most_10_positional_arguments():
    over = []
    for p in _sources(*PACKAGES):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    "jit" in ast.unparse(d) for d in node.decorator_list):
                n = len(node.args.posonlyargs) + len(node.args.args)
                if n > 10:
                    over.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({n})")
    assert not over, over


@pytest.mark.parametrize("folder", [*PACKAGES, "tests"])
def test_no_source_file_over_700_lines(folder):
    long = [f"{p.relative_to(ROOT)}: {n}" for p in _sources(folder)
            if (n := len(p.read_text().splitlines())) > 700]
    assert not long, long


def test_fast_does_not_probe_the_problem():
    probe = re.compile(r"\b(hasattr|getattr)\(prob\b")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in _sources("fast")
            for i, line in enumerate(p.read_text().splitlines(), 1) if probe.search(line)]
    assert not hits, hits


def test_no_development_history_in_the_code():
    note = re.compile(r"\b(session|issue)\s+#?\d", re.IGNORECASE)
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in _sources(*PACKAGES, "tests")
            for i, line in enumerate(p.read_text().splitlines(), 1) if note.search(line)]
    assert not hits, hits
