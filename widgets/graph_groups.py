"""Big backward graphs made readable: collapse nodes into groups the user can expand.

A training step of a real model has thousands of ``grad_fn`` nodes; drawn one
box each they merge into a black bar. ``GroupedGraph`` turns the
``(nodes, edges)`` of ``backward_graph`` into at most ``max_groups`` boxes in
at most ``max_rows`` rows, in three steps, each taken only while the picture
is still too big:

1. **subtrees**: a node whose nodes below have a single input each (a
   layer's ``TBackward0 -> AccumulateGrad`` for its weight) joins the node
   above: one box per layer, as a module would be;
2. **chains**: a run of boxes where each one has a single input and feeds a
   single box (one layer after another) becomes one box, "chain of 72 nodes";
3. **siblings**: boxes with the same parents and the same children (the same
   operation applied to many inputs side by side) become one box;
4. **bands**: consecutive rows become one box each.

Rows are ranks in the graph of boxes (the longest path of arrows above a
box), so every arrow points down.

``expand(key)`` opens a group: its members are collapsed again on their own
(with the same limits), so a band opens into chains and nodes, a chain into
its nodes (or into shorter pieces). ``collapse(key)`` and ``reset()`` go back.
No ipywidgets or matplotlib here: ``autograd_explorer_view.draw_graph`` draws it.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

MAX_GROUPS = 24  # boxes in the picture
MAX_ROWS = 8  # levels shown
MAX_WIDTH = 5  # boxes side by side in one row
MIN_CHAIN = 3  # shorter runs stay single nodes
MAX_SUBTREE = 6  # nodes hanging below one node that join its box (a layer and its parameters)


@dataclass(frozen=True)
class Group:
    """One box of the picture: a single node or several collapsed ones."""

    key: tuple  # (first member, number of members): stable, used by expand()
    kind: str  # "node", "chain", "siblings", "band" or "part"
    members: tuple  # indices into the node list, in order
    level: int  # the top member's level
    column: float  # where its members sit in their levels (0..1), for left-to-right order
    label: str  # the text of the box
    is_leaf: bool  # a single AccumulateGrad node

    @property
    def collapsed(self):
        return len(self.members) > 1


@dataclass(frozen=True)
class GroupEdge:
    """Gradients flow from group ``parent`` to group ``child`` along ``count`` edges."""

    parent: int  # index into the group list
    child: int
    count: int


def short_name(name):
    """``MulBackward0`` -> ``Mul`` (the label of a collapsed group lists many names)."""
    for suffix in ("Backward0", "Backward1", "Backward"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


class GroupedGraph:
    """The groups to draw for ``(nodes, edges)``, and which of them the user opened."""

    def __init__(self, nodes, edges, max_groups=MAX_GROUPS, max_rows=MAX_ROWS,
                 max_width=MAX_WIDTH):
        self.nodes, self.edges = nodes, edges
        self.max_groups, self.max_rows, self.max_width = max_groups, max_rows, max_width
        self.parents = [set() for _ in nodes]
        self.children = [set() for _ in nodes]
        for e in edges:
            self.parents[e.child].add(e.parent)
            self.children[e.parent].add(e.child)
        self.expanded = set()
        self._members = {}  # key -> members, of every group built so far (for collapse)
        self._groups = None

    # -- what the user does ------------------------------------------------------------
    def expand(self, key):
        """Open the group ``key`` (a ``Group.key`` currently shown)."""
        if key not in {g.key for g in self.groups() if g.collapsed}:
            raise KeyError(f"no collapsed group {key!r} is shown")
        self.expanded.add(key)
        self._groups = None

    def collapse(self, key):
        """Close an opened group again (and everything opened inside it)."""
        if key not in self.expanded:
            raise KeyError(f"group {key!r} is not expanded")
        inside = set(self._members[key])
        self.expanded = {k for k in self.expanded if k != key and k[0] not in inside}
        self._groups = None

    def reset(self):
        """Back to the fully collapsed picture."""
        self.expanded.clear()
        self._groups = None

    # -- what the view draws -------------------------------------------------------------
    def groups(self):
        """The boxes, top to bottom and left to right."""
        if self._groups is None:
            found = self._open(self._collapse(range(len(self.nodes))))
            ranks = self._ranks(found, set(range(len(self.nodes))))
            order = sorted(range(len(found)), key=lambda i: (ranks[i], found[i].column))
            self._groups = [found[i] for i in order]
            self._rows = [ranks[i] for i in order]
        return self._groups

    def rows(self):
        """The row of each group of ``groups()``: the longest chain of arrows above it."""
        self.groups()
        return self._rows

    def group_edges(self):
        """The arrows between boxes (edges inside a box are not drawn)."""
        owner = {}
        for position, group in enumerate(self.groups()):
            for member in group.members:
                owner[member] = position
        counts = Counter((owner[e.parent], owner[e.child]) for e in self.edges
                         if owner[e.parent] != owner[e.child])
        return [GroupEdge(p, c, n) for (p, c), n in sorted(counts.items())]

    def collapsed_groups(self):
        """The boxes that hide several nodes (what an "expand" menu offers)."""
        return [g for g in self.groups() if g.collapsed]

    # -- collapsing ----------------------------------------------------------------------
    def _open(self, groups):
        """Replace every expanded group by its members, collapsed again (recursively)."""
        result = []
        for group in groups:
            if group.key in self.expanded and group.collapsed:
                inner = self._collapse(group.members)
                if len(inner) == 1:  # could not be split further: show its pieces
                    inner = self._pieces(group.members)
                result.extend(self._open(inner))
            else:
                result.append(group)
        return result

    def _fits(self, groups, members):
        """At most ``max_groups`` boxes, ``max_rows`` rows and ``max_width`` boxes a row?"""
        if len(groups) > self.max_groups:
            return False  # (without computing the rows: the common case for a big graph)
        rows = Counter(self._ranks(groups, members))
        return len(rows) <= self.max_rows and max(rows.values(), default=0) <= self.max_width

    def _collapse(self, members):
        """Groups for ``members`` (node indices): singles if they fit, else subtrees,
        chains, siblings, then bands, stopping as soon as the picture fits."""
        members = sorted(members)
        inside = set(members)
        groups = [self._group("node", [m]) for m in members]
        for step in (self._subtrees, self._chains, self._siblings, self._bands):
            if self._fits(groups, inside):
                break
            groups = step(groups, inside)
        return groups

    def _links(self, groups, members):
        """For each group, the groups it sends gradients to and receives them from."""
        owner = {m: i for i, g in enumerate(groups) for m in g.members}
        downs = [set() for _ in groups]
        ups = [set() for _ in groups]
        for i, g in enumerate(groups):
            for m in g.members:
                for c in self.children[m] & members:
                    if owner[c] != i:
                        downs[i].add(owner[c])
                        ups[owner[c]].add(i)
        return ups, downs

    def _ranks(self, groups, members):
        """Row of each group: the longest path of group-to-group arrows above it."""
        ups, downs = self._links(groups, members)
        waiting = [len(u) for u in ups]
        rank = [0] * len(groups)
        ready = [i for i, n in enumerate(waiting) if n == 0]
        for i in ready:  # Kahn's topological order; the list grows while we walk it
            for j in sorted(downs[i]):
                rank[j] = max(rank[j], rank[i] + 1)
                waiting[j] -= 1
                if waiting[j] == 0:
                    ready.append(j)
        return rank

    def _subtrees(self, groups, members):
        """A small subtree (at most ``MAX_SUBTREE`` nodes, each with one input, like a
        layer's ``TBackward0 -> AccumulateGrad`` for its weight) joins the node above
        it: one box per layer."""
        hanging, size = {}, {}
        for m in reversed(sorted(members)):  # children before parents (nodes are level-sorted)
            parents = self.parents[m]
            size[m] = 1 + sum(size.get(c, 0) for c in self.children[m])
            hanging[m] = (len(parents) == 1 and parents <= members and size[m] <= MAX_SUBTREE
                          and all(hanging.get(c, False) for c in self.children[m]))
        head = {}
        for m in sorted(members):
            head[m] = head[next(iter(self.parents[m]))] if hanging[m] else m
        units = {}
        for m in sorted(members):
            units.setdefault(head[m], []).append(m)
        return [self._group("subtree" if len(u) > 1 else "node", u) for u in units.values()]

    def _chains(self, groups, members):
        """Runs of groups where each has a single input and feeds a single group
        (one layer after another) become one group each."""
        ups, downs = self._links(groups, members)
        order = sorted(range(len(groups)), key=self._ranks(groups, members).__getitem__)
        chain_of, chains = {}, []
        for i in order:
            if len(ups[i]) == 1:
                (p,) = ups[i]
                if len(downs[p]) == 1 and p in chain_of:
                    chain_of[i] = chain_of[p]
                    chains[chain_of[i]].append(i)
                    continue
            chain_of[i] = len(chains)
            chains.append([i])
        result = []
        for chain in chains:
            if len(chain) >= MIN_CHAIN:
                result.append(self._group("chain", [m for i in chain for m in groups[i].members]))
            else:
                result.extend(groups[i] for i in chain)
        return result

    def _siblings(self, groups, members):
        """Groups with the same parent groups and the same child groups merge into one."""
        ups, downs = self._links(groups, members)
        same = {}
        for i, g in enumerate(groups):
            same.setdefault((frozenset(ups[i]), frozenset(downs[i])), []).append(g)
        return [alike[0] if len(alike) == 1 else
                self._group("siblings", [m for g in alike for m in g.members])
                for alike in same.values()]

    def _bands(self, groups, members):
        """Consecutive rows merged so that at most ``max_rows`` remain, one box each."""
        ranks = self._ranks(groups, members)
        per_band = math.ceil((max(ranks) + 1) / self.max_rows)
        bands = {}
        for g, rank in zip(groups, ranks):
            bands.setdefault(rank // per_band, []).extend(g.members)
        return [self._group("band" if len(bands[b]) > 1 else "node", bands[b])
                for b in sorted(bands)]

    def _pieces(self, members):
        """A group that does not split by structure (one long chain, many siblings):
        cut its layers (see ``_subtrees``), in order, into ``max_width`` pieces."""
        inside = set(members)
        units = self._subtrees([self._group("node", [m]) for m in sorted(members)], inside)
        if len(units) == 1:  # one small subtree: cut its nodes instead
            units = [self._group("node", [m]) for m in sorted(members)]
        size = math.ceil(len(units) / self.max_width)
        pieces = [[m for u in units[i:i + size] for m in u.members]
                  for i in range(0, len(units), size)]
        return [self._group("part" if len(p) > 1 else "node", p) for p in pieces]

    def _group(self, kind, members):
        members = tuple(sorted(members))
        self._members[(members[0], len(members))] = members
        nodes = [self.nodes[m] for m in members]
        top = min(n.level for n in nodes)
        column = sum((n.column + 1) / (n.width + 1) for n in nodes) / len(nodes)
        if len(members) == 1:
            node = nodes[0]
            return Group((members[0], 1), "node", members, node.level, column, node.name,
                         node.is_leaf)
        names = Counter(short_name(n.name) for n in nodes).most_common()
        shown = " ".join(f"{name}×{count}" for name, count in names[:3])
        if len(names) > 3:
            shown += " …"
        title = {"subtree": f"{nodes[0].name} + {len(nodes) - 1} below",
                 "chain": f"chain of {len(nodes)} nodes",
                 "siblings": f"{len(nodes)} nodes side by side",
                 "band": f"{len(nodes)} nodes", "part": f"part: {len(nodes)} nodes"}[kind]
        return Group((members[0], len(members)), kind, members, top, column,
                     f"{title}\n{shown}", False)
