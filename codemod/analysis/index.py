"""The cross-file class index: which classes derive from ``torch.nn.Parameter``, and their MROs.

Base names are resolved through imports and re-exports (``from .parameter import X`` in an
``__init__.py``), so a hierarchy that spans files is one hierarchy.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, field

from codemod.analysis.classes import ClassFacts, FileFacts
from codemod.analysis.unsure_bases import rebound_base, unsure_parameter_base
from codemod.types import PARAMETER_QUALNAMES


def follow_reexports(qualname: str | None, stop: Container[str],
                     file_of: Callable[[str], FileFacts | None]) -> str | None:
    """Follow re-exports: ``pkg.X`` -> ``pkg.mod.X`` when ``pkg/__init__.py`` imports it.

    ``file_of`` gives the analysed file of a module name (None: not analysed); the walk
    stops at a name in ``stop``, at a name no analysed module binds, and at a loop.
    """
    seen: set[str] = set()
    while qualname is not None and qualname not in stop and qualname not in seen:
        seen.add(qualname)
        module, _, name = qualname.rpartition(".")
        # The longest module prefix that is an analysed file.
        while module:
            ff = file_of(module)
            if ff is not None:
                break
            module, _, parent = module.rpartition(".")
            name = f"{parent}.{name}"
        else:
            return qualname
        head, _, rest = name.partition(".")
        target = ff.bindings.get(head)
        if target is None:
            return qualname
        qualname = f"{target}.{rest}" if rest else target
    return qualname


class MROError(Exception):
    """C3 linearisation failed (Python itself would reject the class)."""


def c3_merge(sequences: list[list[str]]) -> list[str]:
    """The C3 merge of linearisations, as ``type.__mro__`` computes it."""
    result: list[str] = []
    seqs = [list(s) for s in sequences if s]
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head in other[1:] for other in seqs):
                break
        else:
            raise MROError("inconsistent method resolution order")
        result.append(head)
        for seq in seqs:
            if seq and seq[0] == head:
                del seq[0]
        seqs = [s for s in seqs if s]
    return result


@dataclass
class ClassIndex:
    """All classes of the analysed files, keyed by qualified name."""

    files: dict[str, FileFacts] = field(default_factory=dict)
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    #: Qualified names of classes deriving (transitively) from torch.nn.Parameter.
    param_classes: set[str] = field(default_factory=set)
    mros: dict[str, list[str]] = field(default_factory=dict)
    mro_errors: dict[str, str] = field(default_factory=dict)
    subclasses: dict[str, set[str]] = field(default_factory=dict)
    #: Classes counted as Parameter classes because a base may be one through a binding
    #: the index does not follow (``unsure_bases``), with the reason: refused.
    unsure: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, files: list[FileFacts]) -> ClassIndex:
        """Index ``files``: resolve bases across them, find Parameter classes, compute MROs."""
        index = cls()
        for ff in files:
            index.files[ff.module_name] = ff
            for facts in ff.classes:
                index.classes[facts.qualname] = facts
        index._find_param_classes()
        for qualname in sorted(index.param_classes):
            index._mro(qualname)
        for qualname in index.param_classes:
            for base in index.param_bases(qualname):
                index.subclasses.setdefault(base, set()).add(qualname)
        return index

    def canonical(self, qualname: str | None) -> str | None:
        """Follow re-exports: ``pkg.X`` -> ``pkg.mod.X`` when ``pkg/__init__.py`` imports it."""
        return follow_reexports(qualname, self.classes, self.files.get)

    def base_qualnames(self, qualname: str) -> list[str | None]:
        """Canonical qualified names of a class's bases (None: not statically known)."""
        return [self.canonical(q) for q in self.classes[qualname].base_qualnames]

    def param_bases(self, qualname: str) -> list[str]:
        """The bases of a class that are themselves Parameter classes (converted kinds)."""
        return [q for q in self.base_qualnames(qualname) if q in self.param_classes]

    def is_parameter(self, qualname: str | None) -> bool:
        """Whether ``qualname`` is torch's Parameter (or ``UninitializedParameter``) or,
        re-exports followed, a Parameter class of the index found so far."""
        return qualname is not None and (
            qualname in PARAMETER_QUALNAMES or _is_uninitialized(qualname)
            or self.canonical(qualname) in self.param_classes)

    def is_param_root_base(self, qualname: str | None) -> bool:
        """Whether a base is torch.nn.Parameter itself."""
        return qualname in PARAMETER_QUALNAMES

    def _find_param_classes(self) -> None:
        changed = True
        while changed:
            changed = False
            for qualname in self.classes:
                if qualname in self.param_classes:
                    continue
                bases = self.base_qualnames(qualname)
                if any(b in PARAMETER_QUALNAMES or b in self.param_classes for b in bases) \
                        or any(b is not None and _is_uninitialized(b) for b in bases):
                    self.param_classes.add(qualname)
                    changed = True
                    facts = self.classes[qualname]
                    rebound = rebound_base(facts, facts.file or self.files.get(facts.module),
                                           self.files.get, self.canonical)
                    if rebound is not None:
                        self.unsure[qualname] = rebound
                elif self._dynamic_parameter_base(qualname):
                    # Reported (and refused) rather than silently skipped: it may be one.
                    self.param_classes.add(qualname)
                    changed = True
                else:
                    facts = self.classes[qualname]
                    reason = unsure_parameter_base(
                        facts, facts.file or self.files.get(facts.module),
                        self.is_parameter, self.classes,
                        self.canonical, self.files.get)
                    if reason is not None:
                        self.unsure[qualname] = reason
                        self.param_classes.add(qualname)
                        changed = True

    def _dynamic_parameter_base(self, qualname: str) -> bool:
        """A base computed by a call (``class X(make_base())``) in a file about Parameters."""
        import libcst as cst

        facts = self.classes[qualname]
        if not any(isinstance(e, cst.Call) for e in facts.base_exprs):
            return False
        ff = self.files.get(facts.module)
        return ff is not None and any(
            q in PARAMETER_QUALNAMES for q in ff.bindings.values()
        ) or (ff is not None and "torch" in ff.bindings)

    def _mro(self, qualname: str, _stack: tuple[str, ...] = ()) -> list[str]:
        """MRO restricted to Parameter classes of the index (torch's own classes omitted)."""
        if qualname in self.mros:
            return self.mros[qualname]
        if qualname in _stack:
            self.mro_errors[qualname] = "cyclic inheritance"
            return [qualname]
        bases = self.param_bases(qualname)
        seqs = [self._mro(b, _stack + (qualname,)) for b in bases]
        try:
            mro = [qualname] + c3_merge(seqs + [list(bases)])
        except MROError as exc:
            self.mro_errors[qualname] = str(exc)
            mro = [qualname] + [q for s in seqs for q in s]
        self.mros[qualname] = mro
        return mro


def _is_uninitialized(qualname: str) -> bool:
    from codemod.types import UNINITIALIZED_QUALNAMES

    return qualname in UNINITIALIZED_QUALNAMES
