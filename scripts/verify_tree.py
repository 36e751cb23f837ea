"""Independent check of a converted tree, with Python's own ``ast`` (not LibCST).

    python scripts/verify_tree.py ORIGINAL_DIR CONVERTED_DIR

ORIGINAL_DIR and CONVERTED_DIR are the same package tree before and after ``codemod
apply`` (e.g. two copies of ``vllm/``). It reports:

* the converted names: module-level ``def X`` with a matching ``Features.X`` constant;
* every remaining use of a converted name *as a class* anywhere in the converted tree
  (``isinstance``/``issubclass`` argument, ``type(x) is/==/in`` comparison, class base,
  attribute read, annotation), resolved through imports and module attributes;
* other value uses (names stored or passed around), which keep working as factories;
* every changed file compiled with ``compile()``.

Exit status 1 if a class-style use remains or a changed file does not compile.
"""

from __future__ import annotations

import ast
import filecmp
import sys
from collections import Counter
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def converted_names(root: Path) -> set[str]:
    names: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "class Features" not in text:
            continue
        tree = ast.parse(text)
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "Features":
                for item in node.body:
                    if isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name):
                        if item.targets[0].id in functions:
                            names.add(f"{module_name(root, path)}.{item.targets[0].id}")
    return names


def bindings(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                if not is_package:
                    parts = parts[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                out[alias.asname or alias.name] = f"{base}.{alias.name}"
    return out


def dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def scan(root: Path, names: set[str]) -> tuple[Counter[str], list[str]]:
    """Class-style uses remaining (by kind) and their locations."""
    reexports: dict[str, str] = {}
    trees: dict[Path, tuple[ast.Module, str, dict[str, str], set[str]]] = {}
    short = {n.rsplit(".", 1)[-1] for n in names}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if not any(s in text for s in short):
            continue
        tree = ast.parse(text)
        module = module_name(root, path)
        binds = bindings(tree, module, path.name == "__init__.py")
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        trees[path] = (tree, module, binds, defined)
        for local, target in binds.items():
            reexports[f"{module}.{local}"] = target

    def canonical(qual: str) -> str:
        seen = set()
        while qual in reexports and qual not in seen and qual not in names:
            seen.add(qual)
            qual = reexports[qual]
        return qual

    kinds: Counter[str] = Counter()
    sites: list[str] = []
    for path, (tree, module, binds, defined) in trees.items():
        def resolve(node: ast.AST) -> str | None:
            text = dotted(node)
            if text is None:
                return None
            head, _, rest = text.partition(".")
            if head in binds:
                base = binds[head]
            elif head in defined:
                base = f"{module}.{head}"
            else:
                return None
            qual = canonical(f"{base}.{rest}" if rest else base)
            return qual if qual in names else None

        parents: dict[int, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                parents[id(child)] = parent
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
                continue  # a binding (e.g. the ``Features`` constants), not a use
            if not resolve(node):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute):
                if resolve(parent):
                    continue  # the inner part of a longer chain that resolves
                kind = "attribute"
            elif isinstance(parent, ast.Call) and parent.func is node:
                continue  # a factory call: fine
            else:
                up = parent
                while isinstance(up, (ast.Tuple, ast.List, ast.Set, ast.BinOp, ast.Subscript)):
                    up = parents.get(id(up))
                if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and \
                        up.func.id in ("isinstance", "issubclass"):
                    kind = up.func.id
                elif isinstance(up, ast.Compare) and any(
                    _is_type_of(side) for side in [up.left, *up.comparators]
                ):
                    kind = "type-comparison"
                elif isinstance(up, ast.ClassDef):
                    kind = "class-base"
                elif isinstance(up, (ast.arg, ast.FunctionDef, ast.AnnAssign)) and \
                        getattr(up, "annotation", None) is not None or isinstance(up, ast.FunctionDef):
                    kind = "annotation"
                else:
                    kind = "value"
            kinds[kind] += 1
            sites.append(f"{path}:{node.lineno}:{node.col_offset + 1}: {kind}: {ast.unparse(node)}")
    return kinds, sites


def _is_type_of(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
        return True
    return isinstance(node, ast.Attribute) and node.attr == "__class__"


def changed_files(original: Path, converted: Path) -> list[Path]:
    out = []
    for path in sorted(converted.rglob("*.py")):
        before = original / path.relative_to(converted)
        if not before.exists() or not filecmp.cmp(before, path, shallow=False):
            out.append(path)
    return out


def main(argv: list[str]) -> int:
    original, converted = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    names = converted_names(converted)
    print(f"converted names: {len(names)}")
    for name in sorted(names):
        print(f"  {name}")
    kinds, sites = scan(converted, names)
    print("uses of converted names (besides calls and imports):", dict(sorted(kinds.items())))
    class_style = [site for site in sites if ": value: " not in site]
    for site in sites:
        label = "value use (a factory reference; fine)" if ": value: " in site else "CLASS-STYLE USE LEFT"
        print(f"  {label}: {site}")
    changed = changed_files(original, converted)
    failures = 0
    for path in changed:
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            failures += 1
            print(f"  DOES NOT COMPILE: {path}: {exc}")
    print(f"changed files: {len(changed)}, compiled: {len(changed) - failures}")
    return 1 if class_style or failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
