"""The last check of a plan: no use of a class about to become a function escapes.

What it does
    The use-site rewrites and the leftover search see a class where the file's import
    statements name it (``from m import X``, ``import m as M; M.X``, re-exports in an
    ``__init__.py``). ``escaped_uses`` reads every file that mentions a converted class's
    name with CPython's parser and also follows what those do not:

    * ``from m import *`` (``__all__`` honoured, chains of star imports through
      ``__init__.py`` files), in the file itself or in a module it imports the name from;
    * ``getattr(module, "X")``, ``globals()["X"]``, ``module.__dict__["X"]`` and
      ``vars(module)["X"]`` with a literal name, and their ``.get("X")`` forms;
    * modules looked up by a string: ``importlib.import_module("a.b").X``,
      ``m = import_module("a.b")`` (in any scope) then ``m.X``, ``sys.modules["a.b"].X``.

    A mention reached only that way is an escaped use when it needs a class (an
    ``isinstance``/``issubclass`` argument, ``type(x) is X``, a base, ``except X``,
    ``X.attr``, ``X | Y``, an annotation...) or, without ``allow-value-uses``, when it is
    any other value use (``K = globals()["X"]``, where ``K`` may later be an
    ``isinstance`` argument) that ``class_values`` does not prove. Calls ``X(...)`` stay
    valid: the factory has the name.
    A ``case X():`` pattern of a class the rewrites do resolve is an escaped use too: no
    rewrite changes ``match`` patterns.
Why
    A class is converted only when every mention of its name is rewritten or proven to
    be something else; each escaped use refuses its class, naming ``path:line``.
Limits
    Mentions inside strings (``eval("isinstance(p, X)")``, f-string text) are not code
    and are not followed. An attribute of an object the file cannot resolve
    (``self.kinds.X``) is taken for something else.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.ast_uses import (
    attribute_by_call,
    dict_get,
    dict_owner,
    spelled_name,
    type_name_comparisons,
    use_kind,
)
from codemod.analysis.names import import_from_source, import_targets, module_name_for, module_scope_bindings
from codemod.analysis.python_trees import identifiers_as_written
from codemod.analysis.source_lines import char_column, physical_lines
from codemod.analysis.text_search import names_pattern, star_import, unjoined
from codemod.analysis.use_rules import USE_RULES, Outcome, UseKind
from codemod.planning.made_at_run_time import made_at_run_time
from codemod.planning.plan import Plan
from codemod.prefilters import aliased, prefilter

#: (line, 1-based column, class qualname, source text, how the use was reached).
Escape = tuple[int, int, str, str, str]


@dataclass
class _ModuleInfo:
    """What a module binds at module level, as far as the safety net follows it."""

    explicit: dict[str, list[str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    declared_all: list[str] | None = None


def _quoted(names: frozenset[str]) -> re.Pattern[str]:
    """A class name as a string literal (``getattr(m, "X")``, ``globals()["X"]``), also
    the last part of a dotted one (``attrgetter("m.X")``)."""
    return names_pattern(r"[\"'](?:[\w.]*\.)?(?:{names})[\"']", names)


#: A name read off an object (``X.__name__``, ``BS.__qualname__``): with an import of a
#: class under another name (``aliased``), any spelling opens the file.
_NAME_READ = re.compile(r"\w\s*\.\s*__(?:qual)?name__")


def _name_read(names: frozenset[str]) -> re.Pattern[str]:
    """A class's own name read off it: ``X.__name__``, ``X.__qualname__``."""
    return names_pattern(r"(?<![\w])(?:{names})\s*\.\s*__(?:qual)?name__", names)


def _spells_names(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` may compare a type's name with one of ``names``: it reads a name
    (``__name__``, ``__qualname__``) or a type's text (``str(type(p))``) and spells one of
    them as a string or as ``X.__name__``, also under a name it imports the class as
    (the gate of ``type_name_comparisons``)."""
    return ("__name__" in text or "__qualname__" in text or "type(" in text
            or "__class__" in text) and (
        _quoted(names).search(text) is not None or _name_read(names).search(text) is not None
        or (_NAME_READ.search(text) is not None and aliased(text, names)))


def _case_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """``case X(`` (also ``case m.X(``, or after ``|`` in an or-pattern)."""
    return names_pattern(r"^[ \t]+case\s[^\n]*?(?<!\w)(?:{names})\s*\(", names, re.MULTILINE)


def dotted_mention(names: frozenset[str]) -> re.Pattern[str]:
    """``.X`` for a class name ``X`` (an attribute chain that may end at the class)."""
    return names_pattern(r"\.\s*(?:{names})(?!\w)", names)


#: ``case`` and a blank: a ``case`` clause where only blanks stand before it on its
#: line (``_indented_case``).
_CASE = re.compile(r"case\s")


#: A star import anywhere in a file.
#: A module looked up by a name in a string (``importlib.import_module``, ``sys.modules``).
_DYNAMIC_MODULE = ("import_module", "sys.modules", "__import__")
#: Each of ``_DYNAMIC_MODULE`` as a word (``unjoined``: starting no longer name).
_DYNAMIC_WORD = re.compile(r"(?:import_module|sys\.modules|__import__)\b")


class SafetyNet:
    """Finds escaped uses of a plan's converted classes in the files of a tree."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self._trees: dict[Path, ast.Module | None] = {}
        self._modules: dict[str, Path | None] = {}
        self._by_stem: dict[str, list[Path]] | None = None
        self._infos: dict[str, _ModuleInfo] = {}
        self._any_star: bool | None = None
        self._mention_cache: dict[Path, tuple[frozenset[str], list]] = {}
        self._scopes: dict[str, frozenset[str] | None] = {}

    # -- the tree ---------------------------------------------------------------

    def tree(self, path: Path) -> ast.Module | None:
        """``path`` parsed by CPython (None when it does not parse: reported elsewhere)."""
        if path not in self._trees:
            try:
                self._trees[path] = python_trees.parse(self.texts[path])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[path] = None
        return self._trees[path]

    def module_path(self, module: str) -> Path | None:
        """The file of module ``module`` in the tree, if any (files whose last name part
        matches are named with ``module_name_for``; the others are never looked at)."""
        if self._by_stem is None:
            self._by_stem = {}
            for path in sorted(self.texts):
                stem = path.parent.name if path.name == "__init__.py" else path.stem
                self._by_stem.setdefault(stem, []).append(path)
        if module not in self._modules:
            self._modules[module] = next(
                (p for p in self._by_stem.get(module.rpartition(".")[2], ()) if module_name_for(p) == module),
                None)
        return self._modules[module]

    def info(self, module: str) -> _ModuleInfo | None:
        """Module-level bindings of ``module`` (None when it is not a parsed file of the tree)."""
        if module in self._infos:
            return self._infos[module]
        path = self.module_path(module)
        tree = self.tree(path) if path is not None else None
        if path is None or tree is None:
            return None
        info = _ModuleInfo()
        self._infos[module] = info
        for local, imported in import_targets(tree, module, path.name == "__init__.py"):
            info.explicit.setdefault(local, []).append(imported)
        for stmt in _module_level(tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                info.explicit.setdefault(stmt.name, []).append(f"{module}.{stmt.name}")
            elif isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                info.stars.append(import_from_source(stmt, module, path.name == "__init__.py"))
            elif isinstance(stmt, (ast.Assign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id == "__all__":
                        names = _literal_names(stmt.value)
                        info.declared_all = (info.declared_all or []) + names \
                            if isinstance(stmt, ast.AugAssign) else names
                    elif isinstance(target, ast.Name):
                        info.explicit.setdefault(target.id, []).append(f"{module}.{target.id}")
        return info

    def module_scope(self, module: str) -> frozenset[str] | None:
        """Every name ``module`` binds in its module scope (``module_scope_bindings``);
        None when it is no file of the tree or does not compile."""
        if module not in self._scopes:
            path = self.module_path(module)
            self._scopes[module] = None if path is None else module_scope_bindings(self.texts[path], str(path))
        return self._scopes[module]

    def follow(self, qualname: str, is_target: Callable[[str | None], bool],
               canonical: Callable[[str], str | None] = lambda q: q, stars: bool = True,
               _seen: frozenset[str] = frozenset()) -> str | None:
        """The target ``qualname`` leads to through re-exports and (with ``stars``) star
        imports (``canonical`` first, e.g. the class index's own re-export following)."""
        found = canonical(qualname)
        if is_target(found):
            return found
        if found is None or found in _seen:
            return None
        seen = _seen | {qualname, found}
        parts = found.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            info = self.info(".".join(parts[:cut]))
            if info is None:
                continue
            name, rest = parts[cut], parts[cut + 1:]
            targets = info.explicit.get(name) or [
                f"{source}.{name}" for source in (info.stars if stars else []) if self.exports(source, name)
            ]
            for target in targets:
                hit = self.follow(".".join([target, *rest]), is_target, canonical, stars, seen)
                if hit:
                    return hit
            return None
        return None

    def exports(self, module: str, name: str) -> bool:
        """Whether ``from module import *`` may bind ``name``."""
        info = self.info(module)
        if info is None or info.declared_all is None:
            return not name.startswith("_")
        return name in info.declared_all

    def any_star(self) -> bool:
        """Whether some file of the tree has a star import."""
        if self._any_star is None:
            self._any_star = any(star_import(text) for text in self.texts.values())
        return self._any_star

    def own_escape(self, path: Path, names: frozenset[str]) -> bool:
        """Whether ``path`` has a star import, or ``getattr`` (``__getattribute__``,
        ``attrgetter``), ``globals()`` or a ``case`` pattern naming one of ``names``."""
        text = self.texts[path]
        if star_import(text):
            return True
        if ("getattr" in text or "attrgetter" in text or "globals" in text or "__dict__" in text
                or "vars(" in text) and _quoted(names).search(text):
            return True
        if _spells_names(text, names):
            return True
        if any(word in text for word in _DYNAMIC_MODULE) and \
                next(unjoined(text, _DYNAMIC_WORD), None) is not None:
            return True
        return _indented_case(text) and _case_pattern(names).search(text) is not None

    # -- one file ---------------------------------------------------------------

    def escaped_uses(self, path: Path, plan: Plan, names: frozenset[str]) -> list[Escape]:
        """Uses of ``plan``'s converted classes in ``path`` that no rewrite reaches."""
        out: list[Escape] = []
        for node, kind, direct, found, how in self.uses(path, names, plan.is_converted,
                                                        plan.index.canonical):
            outcome = USE_RULES[kind].outcome
            if direct:
                if outcome is Outcome.ESCAPES:
                    out.append(_escape(node, found, "a `case` class pattern, which no rewrite changes"))
            elif outcome is not Outcome.KEPT and not (outcome is Outcome.VALUE and plan.value_use_kept(
                    path, node.lineno, self._column(path, node))):  # type: ignore[attr-defined]
                out.append(_escape(node, found, how))
        out += self._made_at_run_time(path, plan, names)
        tree = self.tree(path) if _spells_names(self.texts[path], names) else None
        aliases = {} if tree is None else {
            local: full.rpartition(".")[2]
            for local, full in import_targets(tree, module_name_for(path), path.name == "__init__.py")
            if full.rpartition(".")[2] in names and local != full.rpartition(".")[2]}
        for node, name in type_name_comparisons(tree, names, aliases) if tree is not None else ():
            how = ("the type's name is compared with the class's name, which a converted "
                   "parameter's type no longer has") if isinstance(node, ast.Compare) else (
                "the class's name (a string, or `X.__name__`) in a file that reads a type's name "
                "(`type(p).__name__`): the comparison may take another spelling, and a "
                "converted parameter's type no longer has that name")
            for qualname, class_plan in plan.classes.items():
                if class_plan.converted and qualname.rpartition(".")[2] == name:
                    out.append(_escape(node, qualname, how))
        return out

    def _made_at_run_time(self, path: Path, plan: Plan, names: frozenset[str]) -> list[Escape]:
        """Mentions of a converted class's name reached through a module of the tree that
        makes that name when it is read (``made_at_run_time``: a module ``__getattr__``),
        as ``getattr(pkg, "X")`` or ``import_module("pkg").X`` reach it: the rewrites
        take it for another object. Each use but a call escapes, for every converted
        class of that name."""
        out: list[Escape] = []
        converted_named: dict[str, list[str]] = {}
        for qualname, class_plan in plan.classes.items():
            if class_plan.converted:
                converted_named.setdefault(class_plan.name, []).append(qualname)
        for node, kind, named, reached, _how in self._mentions(path, names):
            if USE_RULES[kind].outcome is Outcome.KEPT:
                continue
            for qualname in dict.fromkeys([*named, *reached]):
                module, _, name = qualname.rpartition(".")
                targets = converted_named.get(name, [])
                how = made_at_run_time(self, module, name) if targets and module else None
                if how is not None:
                    out.extend(_escape(node, target, how) for target in targets)
                    break
        return out

    def respelled_uses(self, path: Path, plan: Plan, names: frozenset[str]) -> list[Escape]:
        """Uses of ``plan``'s converted classes in ``path``, a file whose identifiers
        CPython's parser normalises (NFKC: ``\uff22ase`` is ``Base`` to Python) where the
        text prefilters, LibCST and so every rewrite read them as written
        (``python_trees.identifiers_as_written``): a use, a spelling of a name or module
        there may be one no rewrite sees. Each, but a call or a name the factory keeps
        (``X(...)``, ``X.__name__``), escapes. ``names`` are given NFKC-normalised too."""
        text = self.texts[path]
        if text.isascii() or unicodedata.is_normalized("NFKC", text):
            return []
        spelled = names | {unicodedata.normalize("NFKC", name) for name in names}
        # The tokens are read (``identifiers_as_written``) only for a text that names a
        # class once normalised: ~9 ms a file, and 52 of vLLM 0.34's files are not NFKC.
        if not prefilter(unicodedata.normalize("NFKC", text), spelled) or identifiers_as_written(text):
            return []
        return [_escape(node, found, "in a file that spells identifiers with characters Python "
                                     "reads as others (NFKC), which no rewrite reads so")
                for node, kind, _, found, _ in self.uses(path, spelled, plan.is_converted,
                                                          plan.index.canonical)
                if USE_RULES[kind].outcome is not Outcome.KEPT]

    def _column(self, path: Path, node: ast.AST) -> int:
        """The 1-based column of ``node`` in characters (CPython counts UTF-8 bytes)."""
        lines = physical_lines(self.texts[path])
        line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""  # type: ignore[attr-defined]
        return char_column(line, node.col_offset)  # type: ignore[attr-defined]

    def uses(self, path: Path, names: frozenset[str], is_target: Callable[[str | None], bool],
             canonical: Callable[[str], str | None] = lambda q: q, reexports: bool = False,
             ) -> Iterator[tuple[ast.AST, UseKind, bool, str, str]]:
        """Each mention in ``path`` of a target (one of ``names``, resolved to a qualified
        name ``is_target`` accepts): (node, how it is used (``UseKind``), whether import
        statements alone resolve it (through ``canonical``, and with ``reexports`` through
        the import statements of the modules it names), the target, how it was reached)."""
        for node, kind, named, reached, how in self._mentions(path, names):
            direct = next((q for q in map(canonical, named) if is_target(q)), None)
            if direct is None and reexports:
                direct = next((hit for q in named
                               if (hit := self.follow(q, is_target, canonical, stars=False))), None)
            if direct is not None:
                yield node, kind, True, direct, "imported by name"
                continue
            found = next((hit for q in reached if (hit := self.follow(q, is_target, canonical))), None)
            if found is not None:
                yield node, kind, False, found, how

    def _mentions(self, path: Path, names: frozenset[str]) -> list[tuple[ast.AST, UseKind, list[str], list[str], str]]:
        """Each mention of one of ``names`` in ``path``: (node, ``UseKind``, the qualified
        names import statements give it, those star imports, ``getattr`` and ``globals()``
        give it, how in words). Computed once per file for a set of names (planning
        rounds ask again with fewer)."""
        cached = self._mention_cache.get(path)
        if cached is not None and names <= cached[0]:
            return [m for m in cached[1] if spelled_name(m[0]) in names]
        tree = self.tree(path)
        if tree is None:
            return []
        module = module_name_for(path)
        is_package = path.name == "__init__.py"
        bound: dict[str, list[str]] = {}
        for local, imported in import_targets(tree, module, is_package):
            bound.setdefault(local, []).append(imported)
        for stmt in _module_level(tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.setdefault(stmt.name, []).append(f"{module}.{stmt.name}")
        # One walk: the star imports, the names bound to a module looked up by a string
        # (``m = importlib.import_module("a.b")``, in any scope), each node's parent and
        # the mentions.
        stars: list[str] = []
        parents: dict[int, ast.AST] = {}
        found = []
        for parent in ast.walk(tree):
            if isinstance(parent, ast.ImportFrom) and any(a.name == "*" for a in parent.names):
                stars.append(import_from_source(parent, module, is_package))
            elif isinstance(parent, ast.Assign) and (
                    looked_up := module_by_string(parent.value, module, is_package)):
                for target in parent.targets:
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, []).append(f"{_DYNAMIC}{looked_up}")
            for child in ast.iter_child_nodes(parent):
                parents[id(child)] = parent
                spelled = spelled_name(child)
                if spelled is not None and spelled in names:
                    found.append(child)
        out = []
        for node in found:
            enclosing = parents.get(id(node))
            if isinstance(enclosing, ast.Attribute) and enclosing.value is node \
                    and spelled_name(enclosing) in names:
                continue  # the longer chain is looked at instead
            out.append((node, use_kind(node, parents), _qualnames(node, bound, stars, module, True),
                        _qualnames(node, bound, stars, module, False, is_package), _how(node, bound, stars)))
        self._mention_cache[path] = (names, out)
        return out


def _qualnames(node: ast.AST, bound: dict[str, list[str]], stars: list[str], module: str,
               direct: bool, is_package: bool = False) -> list[str]:
    """Qualified names ``node`` may stand for: through the file's import statements and
    module-level definitions (``direct``), or also through star imports, ``getattr``,
    ``operator.attrgetter``, ``__getattribute__``, ``import_module`` and ``globals()``."""
    if isinstance(node, ast.Name):
        names = bound.get(node.id)
        if direct:
            return [n for n in names or [] if not n.startswith(_DYNAMIC)]
        if names:
            return [n.removeprefix(_DYNAMIC) for n in names]
        return [f"{source}.{node.id}" for source in stars]
    if isinstance(node, ast.Attribute):
        return [f"{q}.{node.attr}" for q in _qualnames(node.value, bound, stars, module, direct, is_package)]
    if direct:
        return []
    if (looked_up := module_by_string(node, module, is_package)) is not None:
        return [looked_up]
    if (by_call := attribute_by_call(node)) is not None:  # attrgetter("X")(m), m.__getattribute__("X")
        getter_owner, dotted = by_call
        return [f"{q}.{dotted}" for q in _qualnames(getter_owner, bound, stars, module, direct, is_package)]
    if (got := dict_get(node)) is not None:  # globals().get("X"), m.__dict__.get("X")
        namespace, name = got
        if isinstance(namespace, ast.Call):
            return list(bound.get(name) or [f"{module}.{name}"] + [f"{s}.{name}" for s in stars])
        return [f"{q}.{name}" for q in _qualnames(namespace, bound, stars, module, direct)]
    if isinstance(node, ast.Call) and dict_owner(node) is None:  # getattr(owner, "X")
        return [f"{q}.{node.args[1].value}"  # type: ignore[attr-defined]
                for q in _qualnames(node.args[0], bound, stars, module, direct)]
    if isinstance(node, ast.Subscript) and (owner := dict_owner(node.value)) is not None:  # m.__dict__["X"]
        return [f"{q}.{node.slice.value}"  # type: ignore[attr-defined]
                for q in _qualnames(owner, bound, stars, module, direct)]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str):  # globals()["X"]
        name = node.slice.value
        return list(bound.get(name) or [f"{module}.{name}"] + [f"{s}.{name}" for s in stars])
    return []


def _absolute(call: ast.Call, module: str, is_package: bool) -> str:
    """The module ``import_module(name, package)`` imports (``name`` a string)."""
    name = call.args[0].value  # type: ignore[attr-defined]
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name
    given = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "package"), None)
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        package = given.value
    elif isinstance(given, ast.Name) and given.id == "__package__" and module:
        package = module if is_package else module.rpartition(".")[0]
    else:
        return name
    parts = package.split(".")
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    rest = name[level:]
    return ".".join([*parts, rest] if rest else parts)


#: Marks a name bound to a module looked up by a string (followed only as an escape).
_DYNAMIC = "<dynamic>"


def module_by_string(node: ast.AST, module: str = "", is_package: bool = False) -> str | None:
    """``a.b`` of ``importlib.import_module("a.b")``, ``import_module("a.b")``,
    ``sys.modules["a.b"]`` or ``sys.modules.get("a.b")`` (None: any other expression);
    ``module`` itself (the file asking) for ``__name__`` in their place. A relative name
    (``import_module(".b", "a")``) is resolved against the package given as a string, or
    ``__package__`` (the package of ``module``); with any other package it stays
    relative, and names no module of the tree."""
    key: ast.AST | None = None
    imported = False
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        imported = name == "import_module"
        if imported or (name == "get" and isinstance(func, ast.Attribute)
                        and ast.unparse(func.value) == "sys.modules"):
            key = node.args[0]
    elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules":
        key = node.slice
    if isinstance(key, ast.Name) and key.id == "__name__" and module:
        return module  # the file's own module
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    return _absolute(node, module, is_package) if imported else key.value  # type: ignore[arg-type]


def _how(node: ast.AST, engine: dict[str, list[str]], stars: list[str]) -> str:
    """How an escaped use reaches its class, in words."""
    if (got := dict_get(node)) is not None:
        return ("reached through `globals().get`, which no rewrite follows" if isinstance(got[0], ast.Call)
                else "reached through a module's `__dict__`, which no rewrite follows")
    if attribute_by_call(node) is not None:
        return "reached through an attribute read by a call (`attrgetter`, `__getattribute__`), which no rewrite follows"
    if isinstance(node, ast.Call):
        return "reached through `getattr` with a literal name, which no rewrite follows"
    if isinstance(node, ast.Subscript) and dict_owner(node.value) is not None:
        return "reached through a module's `__dict__`, which no rewrite follows"
    if isinstance(node, ast.Subscript):
        return "reached through `globals()`, which no rewrite follows"
    head = node
    while isinstance(head, ast.Attribute):
        head = head.value
    if module_by_string(head) is not None or (isinstance(head, ast.Name) and any(
            n.startswith(_DYNAMIC) for n in engine.get(head.id, []))):
        return "reached through a module looked up by a string, which no rewrite follows"
    if isinstance(head, ast.Name) and head.id not in engine and stars:
        return f"reached through `from {stars[0]} import *`, which no rewrite follows"
    return "reached through a star import in a re-exporting module, which no rewrite follows"


def _escape(node: ast.AST, qualname: str, how: str) -> Escape:
    return (node.lineno, node.col_offset + 1, qualname, ast.unparse(node), how)  # type: ignore[attr-defined]


def _module_level(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Statements run at import time, including those under ``if``/``try``/``with``."""
    out: list[ast.stmt] = []
    for stmt in statements:
        out.append(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list):
                out += _module_level([s for s in inner if isinstance(s, ast.stmt)])
        for handler in getattr(stmt, "handlers", []) or []:
            out += _module_level(handler.body)
    return out


def _literal_names(node: ast.AST) -> list[str]:
    """The strings of a literal list or tuple (``__all__``)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []



def _indented_case(text: str) -> bool:
    """Whether a line of ``text`` starts with blanks and ``case`` (a ``case`` clause, or
    text that looks like one)."""
    for match in _CASE.finditer(text):
        start = match.start()
        line_start = text.rfind("\n", 0, start) + 1
        if start > line_start and not text[line_start:start].strip(" \t"):
            return True
    return False
