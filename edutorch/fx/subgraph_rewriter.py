"""``torch.fx.subgraph_rewriter``: find a pattern in a graph and replace each occurrence.

    def pattern(x, w):
        return torch.relu(torch.matmul(x, w))
    def replacement(x, w):
        return torch.nn.functional.relu(x @ w)
    replace_pattern(gm, pattern, replacement)   # every relu(matmul(.)) in gm.graph rewritten

How it works (PyTorch's ``SubgraphMatcher``, written out below):

1. *Anchors*: the pattern's returned nodes.  Every graph node that looks like
   an anchor (same op and target) is a candidate.
2. *Matching*: from an anchor, walk up the arguments of pattern and graph
   nodes together; a pattern placeholder matches anything (a node or a
   literal) and is remembered, so a placeholder used twice must match the same
   thing twice.  Several anchors are tried in all combinations (backtracking).
3. *Filters*: a match is dropped if a matched inner node is used outside the
   match, if it overlaps an earlier match, if it would not be contiguous, or if
   a user ``match_filter`` says no.
4. *Replacing*: the replacement graph is copied in before the first user of
   the match's outputs, its placeholders bound to the nodes the pattern's
   placeholders matched; the matched nodes are erased.
"""
import copy
from dataclasses import dataclass, field
from typing import NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """A replaced occurrence: the graph node matched to the pattern's anchor, and pattern node -> graph node."""

    anchor: Node
    nodes_map: dict


@dataclass
class ReplacedPatterns:
    """As ``Match``, plus the nodes the replacement inserted."""

    anchor: Node
    nodes_map: dict
    replacements: list


@dataclass
class InternalMatch:
    """A match being built (``torch.fx.passes.utils.matcher_utils.InternalMatch``)."""

    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)

    def copy(self):
        return InternalMatch(self.anchors, dict(self.nodes_map), list(self.placeholder_nodes),
                             list(self.returning_nodes))


def _get_attr(module, target):
    for atom in target.split("."):
        module = getattr(module, atom)
    return module


class SubgraphMatcher:
    """Finds the occurrences of a pattern graph in a graph (steps 1 to 3 of the module docstring)."""

    def __init__(self, pattern, ignore_literals=False, node_name_match=""):
        self.pattern = pattern
        self.ignore_literals = ignore_literals
        self.node_name_match = node_name_match  # graph nodes whose name contains it match any pattern node
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes = output_node.all_input_nodes
        # a node whose only user is the output is a sink of the pattern: an anchor
        self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    # -- comparing single nodes ------------------------------------------------------------
    def _nodes_are_equal(self, pn, gn):
        if pn.op == "placeholder":  # a wildcard
            return True
        if self.node_name_match and self.node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "output":
            return True
        if pn.op == "get_attr":  # constant tensors match any tensor
            pv = _get_attr(pn.graph.owning_module, pn.target)
            gv = _get_attr(gn.graph.owning_module, gn.target)
            return type(pv) is type(gv)
        return pn.target == gn.target

    def _match_literals(self, pn, gn, match):
        if isinstance(pn, Node):  # a placeholder may stand for a literal argument
            if pn.op != "placeholder":
                return False
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_args(self, args1, args2, match):
        if len(args1) != len(args2):
            return False
        for a1, a2 in zip(args1, args2):
            if isinstance(a1, Node) and isinstance(a2, Node):
                matched = self._match_nodes(a1, a2, match)
            elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                matched = self._match_args(a1, a2, match)
            else:
                matched = self._match_literals(a1, a2, match) or self.ignore_literals
            if not matched:
                return False
        return True

    def _match_nodes(self, pn, gn, match):
        """Does pattern node ``pn`` match graph node ``gn``, inputs included?  Extends ``match``."""
        if pn in match.nodes_map:
            return match.nodes_map[pn] == gn
        if gn in match.nodes_map.values() or not self._nodes_are_equal(pn, gn):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return self._match_args([*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()], match)

    # -- whole matches -----------------------------------------------------------------------
    def _is_contained(self, nodes_map):
        """No inner node of the match (one the pattern does not return) is used outside it."""
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    @staticmethod
    def _is_convex(nodes):
        """Can ``nodes`` be replaced as one block: no path leaves them and comes back?"""
        inside = set(nodes)
        stack = [u for n in nodes for u in n.users if u not in inside]
        seen = set()
        while stack:
            node = stack.pop()
            if node in inside:
                return False
            if node not in seen:
                seen.add(node)
                stack.extend(node.users)
        return True

    @staticmethod
    def _remove_overlapping(matches):
        kept, taken = [], set()
        for match in matches:
            compute = [gn for pn, gn in match.nodes_map.items() if pn.op not in ("placeholder", "output")]
            if not any(gn in taken for gn in compute):
                kept.append(match)
                taken.update(compute)
        return kept

    def match(self, graph):
        """The non-overlapping occurrences of the pattern in ``graph``, in graph order."""
        candidates = [(anchor, [n for n in graph.nodes if self._nodes_are_equal(anchor, n)])
                      for anchor in self.pattern_anchors]
        candidates = [(anchor, nodes) for anchor, nodes in candidates if nodes]
        matches = []

        def backtrack(i, match):
            if i == len(candidates):
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[i]
            for node in nodes:
                attempt = match.copy()
                if self._match_nodes(anchor, node, attempt):
                    backtrack(i + 1, attempt)

        if candidates:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [m for m in matches if self._is_convex(
            [gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")])]
        return self._remove_overlapping(matches)


# -- replacing ------------------------------------------------------------------------------
def _as_graph(fn_or_graph):
    from ._symbolic_trace import symbolic_trace

    if isinstance(fn_or_graph, GraphModule):
        return fn_or_graph.graph
    if isinstance(fn_or_graph, Graph):
        return fn_or_graph
    return symbolic_trace(fn_or_graph).graph


def _insert_point(graph, match):
    """Before the first user of the match's outputs (or after its last node when nothing uses them)."""
    users = {u for n in match.returning_nodes for u in n.users}
    for n in graph.nodes:
        if n in users:
            return n
    next_node = None
    for n in reversed(graph.nodes):
        if n in match.returning_nodes:
            return next_node
        next_node = n
    return None


def _rebind_changed(match, changed):
    """A placeholder matched a node an earlier replacement removed: use its replacement."""
    for i, gn in enumerate(match.placeholder_nodes):
        if isinstance(gn, Node) and gn in changed:
            match.placeholder_nodes[i] = changed[gn]
            for pn, value in match.nodes_map.items():
                if value is gn:
                    match.nodes_map[pn] = changed[gn]
                    break


def _replace_one(gm, match, pattern_graph, replacement_graph, changed):
    """Copy the replacement in for one match and erase the matched nodes; returns ReplacedPatterns."""
    original = gm.graph
    placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(match.placeholder_nodes) != len(placeholders):
        raise AssertionError("the pattern and the replacement must take the same number of inputs")
    _rebind_changed(match, changed)
    val_map = dict(zip(placeholders, match.placeholder_nodes))
    with original.inserting_before(_insert_point(original, match)):
        copied = original.graph_copy(replacement_graph, val_map)
    if isinstance(copied, Node):
        copied = (copied,)
    replacements = [v for v in val_map.values() if v not in match.placeholder_nodes]
    for gn, new in zip(match.returning_nodes, copied):
        gn.replace_all_uses_with(new)
        changed[gn] = new
    for pn in reversed(pattern_graph.nodes):
        if pn.op not in ("placeholder", "output"):
            original.erase_node(match.nodes_map[pn])
    return ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map, replacements=replacements)


def _copy_attributes(gm, replacement):
    """Submodules and attributes the replacement module uses, copied into ``gm`` where missing."""
    from ..nn import Module

    gm.delete_all_unused_submodules()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr"):
            continue
        try:
            _get_attr(gm, node.target)
            continue
        except AttributeError:
            pass
        try:
            value = _get_attr(replacement, node.target)
        except AttributeError:
            raise RuntimeError('Attempted to create a "', node.op, '" node during subgraph rewriting '
                               f"with target {node.target}, but the referenced attribute does not exist in "
                               "the replacement GraphModule") from None
        if isinstance(value, Module):
            gm.add_submodule(node.target, copy.deepcopy(value))
        else:
            setattr(gm, node.target, copy.deepcopy(value))


def _replace_pattern(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                     replacement_callback=None, node_name_match=""):
    from ..nn import Module

    pattern_graph = _as_graph(pattern)
    matches = SubgraphMatcher(pattern_graph, ignore_literals, node_name_match).match(gm.graph)
    matches = [m for m in matches if all(f(m, gm.graph, pattern_graph) for f in match_filters or [])]
    common = _as_graph(replacement) if replacement is not None else None
    changed, results = {}, []
    for match in matches:
        graph = replacement_callback(match, gm.graph, pattern_graph) if replacement_callback else common
        results.append(_replace_one(gm, match, pattern_graph, graph, changed))
    gm.recompile()
    if isinstance(replacement, Module):
        _copy_attributes(gm, replacement)
    return results


def replace_pattern(gm, pattern, replacement):
    """``torch.fx.replace_pattern``: replace every occurrence of ``pattern`` in ``gm`` by ``replacement``.

    ``pattern`` and ``replacement`` are functions (traced), Graphs or GraphModules
    taking the same inputs.  Returns a ``Match`` per replaced occurrence; ``gm`` is
    recompiled.
    """
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                                 replacement_callback=None, node_name_match=""):
    """``replace_pattern`` keeping only matches every ``match_filter(match, graph, pattern_graph)`` accepts.

    ``ignore_literals=True`` lets literal arguments (``x + 1`` vs ``x + 2``) match
    any value; ``replacement_callback(match, graph, pattern_graph)`` may give a
    replacement graph per match; a graph node whose name contains ``node_name_match``
    matches any pattern node.  Returns ``ReplacedPatterns`` (with the inserted nodes).
    """
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback,
                            node_name_match)
