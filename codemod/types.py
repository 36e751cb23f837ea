"""Frozen values shared by every module: options, per-file results, refusals.

Results are values, not exceptions: the engine returns a ``FileResult`` whose
``outcome`` says what happened, and the CLI decides what to print, write and which exit
code to return.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

#: Qualified names under which torch exposes ``nn.Parameter``.
PARAMETER_QUALNAMES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: Qualified names of Parameter subclasses that cannot be converted (lazy shape).
UNINITIALIZED_QUALNAMES = frozenset(
    {
        "torch.nn.UninitializedParameter",
        "torch.nn.parameter.UninitializedParameter",
        "torch.nn.parameter.UninitializedTensorMixin",
    }
)

#: Attributes torch's tensor type defines in C as data descriptors (torch 2.13: every
#: public one on ``torch._C.TensorBase``, ``torch.Tensor`` and ``nn.Parameter``). A class
#: member of the same name wins over them for the class's instances, but on a plain
#: Parameter the descriptor wins over anything stored on the instance, so a class that
#: defines one of these cannot become a factory. ``tests/unit/test_tensor_attributes.py``
#: compares the list with the installed torch.
TENSOR_DATA_DESCRIPTORS = frozenset({
    "H", "T", "data", "device", "dtype", "grad", "grad_dtype", "grad_fn", "imag", "is_cpu",
    "is_cuda", "is_ipu", "is_leaf", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia",
    "is_nested", "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xla",
    "is_xpu", "itemsize", "layout", "mH", "mT", "name", "nbytes", "ndim", "output_nr",
    "real", "requires_grad", "retains_grad", "shape", "volatile",
})

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "*.egg-info",
)


class Outcome(enum.Enum):
    """What the engine did with one file."""

    CHANGED = "changed"
    UNCHANGED = "unchanged"
    REFUSED = "refused"
    FAILED = "failed"


class RefusalKind(enum.Enum):
    """What kind of rule refused a class: the CLI's exit code and the planner's own
    decisions read this, never the text of the reason."""

    #: Listed in ``[tool.codemod] allow-classes``: stays a subclass by the user's choice.
    ALLOWED = "allowed"
    #: The class itself (its shape, bases, members, ``__init__``/``__new__``, generated
    #: names) cannot become a factory.
    UNCONVERTIBLE = "unconvertible"
    #: A use of the class somewhere in the tree that no rewrite covers.
    USE_SITE = "use-site"
    #: Stays a class because a related class of its hierarchy is refused (``cause``).
    KEPT = "kept"


class UseForm(enum.Enum):
    """How a use no rewrite covers blocks the conversion of its class."""

    #: The class is handed on as a value that reaches a use no rewrite covers.
    VALUE = "value"
    #: The class is used as a class where no rewrite reaches.
    CLASS = "class"
    #: The use escapes the rewrites through another spelling (the safety net's finding).
    ESCAPE = "escape"


@dataclass(frozen=True)
class ChainStep:
    """One step of a value chain: what happens to the class's value there, in words
    (``table `T` read at w8a8.py:124``), and the place it happens (None where a step
    names no place of its own, ``a chain too long to follow``). Reports link each step
    to its place; a reason joins the words (``chain_text``)."""

    text: str
    path: Path | None = None
    line: int | None = None


#: A value chain: the steps from a use of a class to the use no rewrite covers.
Chain = tuple[ChainStep, ...]


def chain_text(chain: Chain) -> str:
    """The chain in words, its steps joined by `` -> ``."""
    return " -> ".join(step.text for step in chain)


@dataclass(frozen=True)
class BlockingUse:
    """The use of a class that no rewrite covers, which a USE_SITE refusal names: the
    place (``path:line`` and its code), how it blocks, and for a value the chain of steps
    from the use to where the value ends up. The refusal's reason is rendered from it."""

    path: Path
    line: int
    code: str
    form: UseForm
    #: VALUE: each step from the use to the use no rewrite covers (``utils.py:29``,
    #: ``table `T` read at w8a8.py:124``, ``isinstance at fp8.py:14``), with its place.
    chain: Chain = ()
    #: ESCAPE: how the use escapes the rewrites, in the safety net's words.
    escape: str = ""

    @property
    def reason(self) -> str:
        """The sentence a refusal for this use gives."""
        place = f"{self.path}:{self.line} (`{self.code}`)"
        if self.form is UseForm.VALUE:
            return (f"used as a value at {place} that reaches a use no rewrite covers: "
                    f"{chain_text(self.chain)}; converting it would break that use")
        if self.form is UseForm.CLASS:
            return (f"used as a class at {place}, a use no rewrite covers; "
                    "converting it would break that line")
        return f"used at {place}, {self.escape}; converting it would break that line"


@dataclass(frozen=True)
class Refusal:
    """Why a class (or a use site) is left unconverted: names the place and the reason."""

    path: Path
    line: int
    subject: str
    reason: str
    kind: RefusalKind = RefusalKind.UNCONVERTIBLE
    #: For a KEPT refusal, the kind of the refusal it follows from, where its reason
    #: names one (None when the class is kept by a base that cannot serve as a shadow).
    cause: RefusalKind | None = None
    #: For a KEPT refusal, the qualified name of the class its reason names: the refused
    #: (or kept) class it stays a class for, so that a report can follow the chain.
    follows: str | None = None
    #: For a USE_SITE refusal, the use that decided it (its reason is rendered from it).
    use: BlockingUse | None = None

    @property
    def chosen(self) -> bool:
        """Whether the class stays a class by the configuration alone: it is allow-listed,
        or kept because an allow-listed class of its hierarchy is."""
        return RefusalKind.ALLOWED in (self.kind, self.cause)

    def render(self) -> str:
        """``path:line: subject: reason``, the form printed in summaries."""
        return f"{self.path}:{self.line}: {self.subject}: {self.reason}"


@dataclass(frozen=True)
class FileResult:
    """The outcome for one file; ``new_text`` is set only when ``outcome`` is CHANGED."""

    path: Path
    outcome: Outcome
    old_text: str | None = None
    new_text: str | None = None
    refusals: tuple[Refusal, ...] = ()
    error: str | None = None
    #: Counts of rewrites by kind, e.g. {"class": 3, "isinstance": 2}.
    counts: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Options:
    """Everything a run needs besides the paths; built from config and flags."""

    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_excludes: tuple[str, ...] = ()
    #: Class names (bare or qualified) that may stay Parameter subclasses.
    allow_classes: tuple[str, ...] = ()
    jobs: int = 1
    #: Accept uses of a converted class as a plain value (it then holds the factory).
    allow_value_uses: bool = False
    #: Prefix of the ``Features`` member names (``Features.<prefix><ClassName>``).
    feature_prefix: str = ""
    #: Import roots (``[tool.codemod] src``, absolute); by default a file's root is
    #: found from the ``__init__.py`` files above it (``analysis.roots``).
    src: tuple[Path, ...] = ()
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)
