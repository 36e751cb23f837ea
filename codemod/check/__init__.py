"""``codemod check``: the CI guard against ``torch.nn.Parameter`` subclass style.

What it does
    Reports, each with a stable code and ``path:line:col`` (reference: docs/checks.md):

    * ``CM001`` a class deriving, directly or through other classes of the tree, from
      ``torch.nn.Parameter``;
    * ``CM002`` an ``isinstance``/``issubclass``/``type(x) is``/``x.__class__ ==`` check (or
      a class base) naming a Parameter class that ``codemod apply`` converts;
    * ``CM003`` ``class Y(X)`` where ``X`` is a factory function that ``apply`` made;
    * ``CM004`` a class-style check against such a factory function;
    * ``CM005`` a tree that is only partly converted;
    * ``CM006`` after migration, a comparison of two objects' types (``type(a) is
      type(b)``), which holds for two converted parameters of different former classes.
Why
    After a migration nothing should bring subclasses back: ``isinstance(p, X)`` against a
    factory raises ``TypeError``, ``type(p) is X`` is silently always false, and
    ``class Y(X)`` fails at import.
How
    The engine decides, exactly as for ``apply`` (same prefilter, same planner, same
    "use no rewrite covers" refusal rounds), which Parameter classes exist and which
    ``apply`` would convert; only the conversion texts are not built. Converted modules
    are recognised by what ``apply`` leaves: the family's runtime module holds a
    ``class Features:`` whose members hold the former classes' qualified names, and each
    module named there a module-level ``def`` of that name (the factory). Use sites are
    found in the files that mention a relevant name (whole identifiers) where a finding
    can be, which CPython's ``ast`` says; each is read from CPython's tree, and with LibCST
    only when that tree cannot decide (a name imported from two places). An unchanged
    tree is answered from the result cache (``cache``) without any of this.
Suppression
    ``# codemod: ignore`` (every code) or ``# codemod: ignore[CM001,CM004]`` on the
    finding's line; ``[tool.codemod] allow-classes`` for classes that may stay subclasses.

Modules
    ``rules``: the finding codes and the ``Finding`` value (what the reporters read);
    ``engine``: plans the tree as ``apply`` does and collects the findings;
    ``converted``: what ``apply`` left in a module it converted;
    ``scan``: a cheap look with CPython's ``ast`` before parsing with LibCST;
    ``uses_from_ast``: class-style uses and their names' resolution on CPython's tree;
    ``uses``: the same with LibCST, for the files CPython's tree cannot decide;
    ``locate``: line and column of the nodes findings point at;
    ``findings``: uses and classes turned into findings, suppression comments;
    ``command``: the result (from the cache or the engine), printed; the exit code;
    ``cache``: the result cache, keyed by the contents of every file a check reads;
    ``result``: ``CheckResult`` and the exit codes.
"""
