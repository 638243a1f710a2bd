"""Check that the project's imports point one way: down the layers, no import circles, no borrowed private names.

Reads every module under `cleaner/` and `jobs/` with `ast` (nothing is imported or run) and
builds the graph of imports between them, those inside functions too: an import deferred into a
function to dodge a circle is still a circle in the design. Prints every cycle (one per strongly
connected component, as the shortest loop through it) and every `from X import _name` that takes
a private name from another module, and every import from a lower layer to a higher one (LAYERS: the
sub-packages of `cleaner/` by role, lowest first; docs/architecture.md) or of a module no layer names.
Exit 0 when there are none, 1 otherwise.

    .venv/bin/python scripts/check_imports.py
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("cleaner", "jobs")

# The layers, lowest first: a module may import from its own layer and the layers below it, never above.
# A layer is a tuple of module names; a name stands for the module and everything under it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cleaner", "cleaner.config", "cleaner.settings", "cleaner.packaged", "cleaner.labels"),  # shared by all
    ("cleaner.warc",),
    ("cleaner.page",),
    ("cleaner.gold",),
    ("cleaner.label",),
    ("cleaner.output",),
    ("cleaner.api",),
    ("cleaner.learn",),
    ("cleaner.tools",),
    ("jobs",),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def read_graph(modules: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    """module -> the project modules it imports; and the private names taken from others."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        bound: dict[str, str] = {}  # local name -> the project module it names (`import x as y`, `from . import x`)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = known(alias.name)
                    if target and target != mod:
                        graph[mod].add(target)
                        if alias.asname:
                            bound[alias.asname] = target
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, path.name == "__init__.py", node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in modules else known(base)
                    if target and target != mod:
                        graph[mod].add(target)
                    if target == sub:
                        bound[alias.asname or alias.name] = sub
                    if target != sub and alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{path.relative_to(ROOT)}:{node.lineno}: {mod} takes {base}.{alias.name}")
        for node in ast.walk(tree):  # module._name: a private name reached through the module
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                private.append(f"{path.relative_to(ROOT)}:{node.lineno}: {mod} takes "
                               f"{bound[node.value.id]}.{node.attr}")
    return graph, private


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer holding `module` (the longest name that covers it), or None.
    `cleaner` itself covers only its own __init__, each other name its module and its sub-modules."""
    best: tuple[int, int] | None = None  # (length of the name, layer)
    for i, layer in enumerate(LAYERS):
        for name in layer:
            covers = module == name or (name != "cleaner" and module.startswith(name + "."))
            if covers and (best is None or len(name) > best[0]):
                best = (len(name), i)
    return None if best is None else best[1]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points up the layers, and every module no layer holds."""
    out = [f"{m} is in no layer (scripts/check_imports.py LAYERS)" for m in sorted(graph) if layer_of(m) is None]
    for mod in sorted(graph):
        low = layer_of(mod)
        for target in sorted(graph[mod]):
            high = layer_of(target)
            if low is not None and high is not None and high > low:
                out.append(f"{mod} ({' '.join(LAYERS[low])}) imports {target} ({' '.join(LAYERS[high])}), "
                           "a layer above it")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The shortest loop through each strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is a few dozen modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    loops = []
    for comp in components:
        members = set(comp)
        start = comp[0]
        # Breadth-first from start back to start, inside the component.
        prev: dict[str, str] = {}
        queue = deque([start])
        found = None
        while queue and found is None:
            v = queue.popleft()
            for w in sorted(graph[v] & members):
                if w == start:
                    found = v
                    break
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [start]
        v = found
        while v is not None and v != start:
            path.insert(1, v)
            v = prev.get(v)
        loops.append(path + [start])
    return loops


def main() -> int:
    modules = {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))
               if "_native" not in p.parts}
    graph, private = read_graph(modules)
    loops = cycles(graph)
    for loop in loops:
        print("import circle: " + " -> ".join(loop))
    for line in private:
        print("private name: " + line)
    upward = layer_violations(graph)
    for line in upward:
        print("layer: " + line)
    print(f"{len(modules)} modules, {sum(map(len, graph.values()))} imports: "
          f"{len(loops)} circles, {len(private)} private names taken, {len(upward)} imports up the layers")
    return 1 if loops or private or upward else 0


if __name__ == "__main__":
    sys.exit(main())
