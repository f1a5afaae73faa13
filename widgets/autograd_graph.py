"""Model of the autograd-graph widget: the backward graph below a ``grad_fn``.

``backward_graph(y.grad_fn)`` walks ``next_functions`` (the public graph API of
PyTorch and edutorch alike) and lays the nodes out in levels: a node sits one
level below the deepest node that points to it, so every arrow goes down,
the way gradients flow from the output to the leaves.  No ipywidgets or
matplotlib here: the view (``autograd_explorer_view.py``) draws it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GraphNode:
    """One node of the backward graph, where the view should draw it."""

    name: str  # the node's class name, e.g. "MulBackward0" or "AccumulateGrad"
    level: int  # 0 for the root (``y.grad_fn``), growing towards the leaves
    column: int  # position within its level, left to right
    width: int  # how many nodes share the level
    is_leaf: bool  # an AccumulateGrad node: it writes a leaf's ``.grad``


@dataclass(frozen=True)
class GraphEdge:
    """``parent.next_functions[input_nr]`` is ``child``: the gradient flows parent → child."""

    parent: int  # index into the node list
    child: int
    input_nr: int  # which input of the parent this edge carries the gradient for


def postorder(root):
    """Every node below ``root``, each listed after all the nodes it points to (iterative DFS)."""
    order, seen = [], {root}
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child, _ in children:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def _breadth_first(root):
    """Every node below ``root`` in breadth-first order, children in input order."""
    order, seen = [root], {root}
    for node in order:  # the list grows while we walk it
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                order.append(child)
    return order


def backward_graph(root):
    """The nodes and edges of the graph below ``root`` (a ``grad_fn``), laid out in levels.

    Returns ``(nodes, edges)``; ``nodes[0]`` is ``root``.  An input that needs
    no gradient (``next_functions`` entry ``(None, 0)``) has no node.
    """
    if root is None:
        raise ValueError("this tensor has no grad_fn: it is a leaf or does not require grad")
    top_down = list(reversed(postorder(root)))  # each node before the nodes it points to
    level = {root: 0}
    for node in top_down:
        for child, _ in node.next_functions:
            if child is not None:
                level[child] = max(level.get(child, 0), level[node] + 1)
    by_level = {}
    for node in _breadth_first(root):  # left to right in input order: arrows do not cross
        by_level.setdefault(level[node], []).append(node)
    index, nodes = {}, []
    for lvl in sorted(by_level):
        row = by_level[lvl]
        for column, node in enumerate(row):
            index[node] = len(nodes)
            name = type(node).__name__
            nodes.append(GraphNode(name, lvl, column, len(row), name == "AccumulateGrad"))
    edges = [
        GraphEdge(index[node], index[child], nr)
        for node in top_down
        for nr, (child, _) in enumerate(node.next_functions)
        if child is not None
    ]
    return nodes, edges


def describe(nodes, edges):
    """The graph as text, one edge per line: ``MulBackward0 -[0]-> AccumulateGrad``."""
    return "\n".join(f"{nodes[e.parent].name} -[{e.input_nr}]-> {nodes[e.child].name}" for e in edges)
