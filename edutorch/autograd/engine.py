"""The backward engine: walk the graph from the outputs, call each node's backward.

1. ``_dependencies`` counts, for every node reachable from the roots, how many
   edges point to it (how many gradients it must wait for).
2. Nodes whose gradients are all in are kept in a heap ordered by creation
   (newest first, as PyTorch's ready queue does), so a node reached through
   several paths runs once, after every contribution has been summed.
3. A node's output is sent along ``next_functions``; leaves' ``AccumulateGrad``
   nodes add it into ``.grad``.  Without ``retain_graph`` each node frees its
   saved tensors once it has run.

A walk over a topological order, not recursion: recursion breaks on deep
graphs and would visit shared nodes twice (the same lesson micrograd teaches).
"""
import heapq

from . import grad_mode
from .function import AccumulateGrad, _anomaly_state

_state = grad_mode._state


def _dependencies(roots):
    """Count incoming edges of every node reachable from ``roots``."""
    deps = {}
    seen = set()
    stack = [node for node in roots if node is not None]
    for node in stack:
        seen.add(node)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


def _needed(roots, targets):
    """Nodes that must run to reach a target node: those with a target below them."""
    needed = {}
    for root in roots:
        if root is None or root in needed:
            continue
        # iterative post-order walk: a node's children are settled before the node
        stack = [(root, iter(root.next_functions))]
        needed[root] = False
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and child not in needed:
                    needed[child] = False
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                needed[node] = any(
                    c in targets or needed[c] for c, _ in node.next_functions if c is not None
                )
    return {node for node, yes in needed.items() if yes}


def _call_tensor_hooks(node, grads):
    """Run ``Tensor.register_hook`` hooks and ``retain_grad`` for a node's outputs."""
    hooks = node.__dict__.get("_tensor_hooks")
    if hooks:
        grads = list(grads)
        for nr, fns in hooks.items():
            for fn in list(fns.values()):
                if grads[nr] is not None:
                    new = fn(grads[nr])
                    if new is not None:
                        grads[nr] = new
    retained = node.__dict__.get("_retained")
    if retained:
        for nr, ref in retained.items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                g = grads[nr] if _state["enabled"] else grads[nr].detach()
                tensor._grad = g.clone() if tensor._grad is None else tensor._grad + g
    return grads


def _call_node(node, grads):
    """Run one node: its pre-hooks, its backward, its post-hooks."""
    pre = node.__dict__.get("_node_pre_hooks")
    if pre:
        for fn in list(pre.values()):
            new = fn(tuple(grads))
            if new is not None:
                grads = list(new)
    if node.materialize_grads and None in grads:
        grads = _materialize(node, grads)
    grad_inputs = node.apply(*grads)
    post = node.__dict__.get("_node_post_hooks")
    if post:
        for fn in list(post.values()):
            new = fn(grad_inputs, tuple(grads))
            if new is not None:
                grad_inputs = tuple(new)
    if _anomaly_state["enabled"]:
        from .anomaly_mode import check_backward_output

        check_backward_output(node, grad_inputs)
    return grad_inputs


def _materialize(node, grads):
    """Replace missing output gradients by zeros shaped like the outputs."""
    shapes = node.__dict__.get("_output_meta")
    if shapes is None:
        return grads
    from .. import _creation

    return [
        g if g is not None else _creation.zeros(shape, dtype=dtype, device=device)
        for g, (shape, dtype, device) in zip(grads, shapes)
    ]


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    """Propagate ``root_grads`` from the ``roots`` edges back through the graph.

    Without ``inputs`` every node runs and leaves accumulate into ``.grad``.
    With ``inputs`` (a list of edges, for ``autograd.grad`` or
    ``backward(inputs=...)``) only nodes on a path to them run, nothing is
    accumulated, and the gradients arriving at those edges are returned.
    """
    root_nodes = [node for node, _ in roots]
    deps = _dependencies(root_nodes)
    targets = None if inputs is None else {node for node, _ in inputs}
    needed = None if inputs is None else _needed(root_nodes, targets)
    captured = {}

    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        if node is not None:
            buf = buffers.setdefault(node, [None] * node._num_outputs)
            buf[nr] = g if buf[nr] is None else buf[nr] + g
    heap = [(-node._sequence_nr, id(node), node) for node in buffers if deps.get(node, 0) == 0]
    heapq.heapify(heap)

    saved_mode = _state["enabled"]
    _state["enabled"] = bool(create_graph)
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = _call_tensor_hooks(node, buffers.pop(node))
            if targets is not None and node in targets:
                for nr, g in enumerate(grads):
                    captured[(node, nr)] = g
            if needed is not None and node not in needed:
                _schedule_children(node, None, deps, buffers, heap)
                continue
            grad_inputs = _call_node(node, grads)
            if not retain_graph:
                node._release()
            _schedule_children(node, grad_inputs, deps, buffers, heap)
    finally:
        _state["enabled"] = saved_mode
    return captured


def _schedule_children(node, grad_inputs, deps, buffers, heap):
    """Send each gradient along its edge; a child whose inputs are all in is ready."""
    for i, (child, nr) in enumerate(node.next_functions):
        if child is None:
            continue
        if grad_inputs is not None:
            g = grad_inputs[i]
            if g is not None:
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child._num_outputs
                buf[nr] = g if buf[nr] is None else buf[nr] + g
        deps[child] -= 1
        if deps[child] == 0:
            if child in buffers:
                heapq.heappush(heap, (-child._sequence_nr, id(child), child))
            else:
                # no gradient reached it: its own children still wait for it
                _schedule_children(child, None, deps, buffers, heap)
