"""``verify``'s output: a table per class and the totals, or the result as JSON."""

from __future__ import annotations

import json

from codemod.verify.model import VerifyResult

#: Differences printed per class before "... and N more".
SHOWN = 10


def as_json(result: VerifyResult) -> str:
    return json.dumps(result.to_dict(), indent=2, default=str)


def as_table(result: VerifyResult) -> str:
    """One row per class (named with its module where two families share a name:
    status, builds, cases, tensors, differences), then each
    difference, the modules that failed to import, and the totals."""
    if result.error:
        return f"codemod verify: {result.error}"
    rows = [("class", "status", "builds", "cases", "tensors", "raised", "differences")]
    names = [cls.name for cls in result.classes]
    for cls in result.classes:
        label = cls.name if names.count(cls.name) == 1 else f"{cls.module}.{cls.name}"
        rows.append((label, cls.status, f"{cls.builds} ({cls.build_origin or '-'})",
                     str(cls.cases), str(cls.tensors), str(cls.raised), str(len(cls.differences))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i])
                       for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    for cls in result.classes:
        for diff in cls.differences[:SHOWN]:
            lines.append(f"{cls.name}: {diff.detail}")
        if len(cls.differences) > SHOWN:
            lines.append(f"{cls.name}: ... and {len(cls.differences) - SHOWN} more")
    for problem in result.import_problems:
        lines.append(f"cannot import {problem.module} ({problem.side}): {problem.error}")
    for skipped in result.check_sites_skipped:
        lines.append(f"check left out: {skipped}")
    lines.append(
        f"{len(result.check_sites)} rewritten check(s) of the tree asked of every parameter "
        f"(type comparisons of pairs of parameters); {len(result.functions)} module "
        f"function(s) called"
        + (f" ({', '.join(name.rpartition('.')[2] for name in result.functions)})"
           if result.functions else "")
        + (f"; {len(result.rewritten_functions)} function(s) copying a parameter called"
           if result.rewritten_functions else "")
        + ("; loaders compiled with torch.compile(fullgraph=True)" if result.compiled else ""))
    for skipped in result.rewritten_functions_skipped:
        lines.append(f"function left out: {skipped}")
    documented = sum(len(cls.documented) for cls in result.classes)
    lines.append(
        f"{len(result.classes)} class(es), {result.cases} case(s), {result.tensors} tensor(s) "
        f"compared bit for bit, {len(result.differences)} difference(s)"
        + (f", {documented} documented difference(s)" if documented else "")
        + f" (tp sizes {'/'.join(map(str, result.tp_sizes))}; {len(result.real_modules)} module(s) "
        f"imported, {len(result.stubbed_modules)} stubbed; {result.seconds:.1f} s)")
    return "\n".join(lines)
