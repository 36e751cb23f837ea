"""Walking a class hierarchy of the index: descendants, ancestors, and the groups of
classes connected through base/subclass edges (what is converted whole or not at all)."""

from __future__ import annotations

from codemod.analysis.index import ClassIndex
from codemod.planning.model import ClassPlan


class HierarchyWalk:
    """Relatives of a class, from the planner's ``index``."""

    index: ClassIndex

    def _descendants(self, qualname: str) -> set[str]:
        out: set[str] = set()
        todo = [qualname]
        while todo:
            for sub in self.index.subclasses.get(todo.pop(), ()):
                if sub not in out:
                    out.add(sub)
                    todo.append(sub)
        return out

    def components(self, plans: dict[str, ClassPlan]) -> list[set[str]]:
        """Hierarchies: classes connected through base/subclass edges."""
        parent: dict[str, str] = {q: q for q in plans}

        def find(q: str) -> str:
            while parent[q] != q:
                parent[q] = parent[parent[q]]
                q = parent[q]
            return q

        for q in plans:
            for base in self.index.param_bases(q):
                if base in parent:
                    parent[find(q)] = find(base)
        groups: dict[str, set[str]] = {}
        for q in plans:
            groups.setdefault(find(q), set()).add(q)
        return list(groups.values())

    def _ancestors(self, qualname: str) -> set[str]:
        return set(self.index.mros.get(qualname, [qualname])[1:])
