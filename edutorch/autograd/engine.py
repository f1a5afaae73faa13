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

For each node, in order: the tensor hooks of its outputs (``register_hook``,
then ``retain_grad``), the node's pre-hooks, its backward, its post-hooks, and
a check of each gradient it returned against its input's shape and dtype.
"""
import heapq
import itertools

from . import _saved_tensor, grad_mode
from .function import AccumulateGrad, _anomaly_state, _profiler_state, accumulate_grad

_state = grad_mode._state
_heappush, _heappop = heapq.heappush, heapq.heappop


def _dependencies(roots):
    """Count incoming edges of every node reachable from ``roots``."""
    deps = {}
    stack = [node for node in roots if node is not None]
    seen = set(stack)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                if child.next_functions and child not in seen:  # leaves have no edges to walk
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
    """Run ``Tensor.register_hook`` hooks, then ``retain_grad``, for a node's outputs."""
    hooks = node._tensor_hooks
    if hooks:
        grads = list(grads)
        for nr, fns in hooks.items():
            for fn in list(fns.values()):
                if grads[nr] is not None:
                    new = fn(grads[nr])
                    if new is not None:
                        grads[nr] = new
    retained = node._retained
    if retained:
        for nr, ref in retained.items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                g = grads[nr] if _state["enabled"] else grads[nr].detach()
                tensor._grad = g.clone() if tensor._grad is None else tensor._grad + g
    return grads


def _call_node_hooked(node, grads):
    """Run one node with its pre-hooks and post-hooks (the slow, observable path)."""
    pre = node._pre_hooks
    if pre:
        for fn in list(pre.values()):
            new = fn(tuple(grads))
            if new is not None:
                grads = list(new)
    if _anomaly_state["enabled"]:  # detect_anomaly: NaN check, forward traceback on errors
        from .anomaly_mode import run_node_checked

        grad_inputs = run_node_checked(node, _call_node, grads)
    else:
        grad_inputs = _call_node(node, grads)
    post = node._post_hooks
    if post:
        for fn in list(post.values()):
            new = fn(grad_inputs, tuple(grads))
            if new is not None:
                grad_inputs = tuple(new)
    return grad_inputs


def _call_node(node, grads):
    """Run one node's backward and check what it returned."""
    if node.materialize_grads and node._output_meta is not None:
        grads = _materialize(node, grads)
    return node.apply(*grads)


def _fix_gradient(node, i, g, meta):
    """A gradient that does not fit its input: sum a broadcast one back, cast the dtype.

    PyTorch's ``validate_outputs``: a gradient whose shape the input can be
    expanded to is summed back to the input's shape; any other shape is an error.
    """
    shape, dtype = meta
    if g._data.shape != shape:
        if not _expandable(shape, g._data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g._data.shape)} but expected shape compatible with {list(shape)}"
            )
        g = g.sum_to_size(shape)
    if g._data.dtype != dtype:
        from .. import _dtype

        g = g.to(_dtype.from_numpy_dtype(dtype))
    return g


def _expandable(shape, target):
    """Can ``shape`` be broadcast (expanded) to ``target``?"""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def _materialize(node, grads):
    """Replace missing output gradients by zeros shaped like the outputs."""
    if all(g is not None for g in grads):
        return grads
    from .. import _creation

    return [
        g if g is not None or meta is None else _creation.zeros(meta[0], dtype=meta[1], device=meta[2])
        for g, meta in zip(grads, node._output_meta)
    ]


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None):
    """Propagate ``root_grads`` from the ``roots`` edges back through the graph.

    Without ``inputs`` every node runs and leaves accumulate into ``.grad``.
    With ``inputs`` (a set of edges, for ``autograd.grad`` or
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
    # heap entries: (-sequence_nr, order of readiness, node): the newest node pops first; nodes
    # with the same number (leaves' AccumulateGrad) run in the order they became ready
    ready = itertools.count()
    heap = [(-node._sequence_nr, next(ready), node) for node in buffers if deps.get(node, 0) == 0]
    heapq.heapify(heap)

    # no autograd.grad targets and no anomaly mode: leaves may be accumulated on the spot
    # (nor a profiler: it records each leaf's AccumulateGrad node, as PyTorch's does)
    plain = targets is None and not _anomaly_state["enabled"] and not _profiler_state["on"]
    saved_mode = _state["enabled"]
    _state["enabled"] = bool(create_graph)  # backward formulas record only for create_graph
    # this backward pass's id, read by saved-tensor hooks (torch._C._current_graph_task_id)
    previous_task = _saved_tensor.enter_graph_task(inputs is None)
    try:
        while heap:
            node = _heappop(heap)[2]
            grads = buffers.pop(node)
            if node._tensor_hooks is not None or node._retained is not None:
                grads = _call_tensor_hooks(node, grads)
            if targets is not None:
                if node in targets:
                    for nr, g in enumerate(grads):
                        captured[(node, nr)] = g
                if node not in needed:
                    _skip(node, deps, buffers, heap, ready)
                    continue
            if _profiler_state["on"]:  # torch.profiler (edutorch/profiler/_recorder.py) times this node
                grad_inputs = _profiler_state["record_node"](node, grads, _call_node_hooked)
            elif node._pre_hooks is None and node._post_hooks is None and not _anomaly_state["enabled"]:
                if node._output_meta is None:  # one output: nothing to materialize
                    grad_inputs = node.apply(*grads)
                else:
                    grad_inputs = _call_node(node, grads)
            else:
                grad_inputs = _call_node_hooked(node, grads)
            if not retain_graph and node._saved:  # free what forward saved; a second backward then fails
                node._saved = ()
                node._released = True
            # send each gradient along its edge; a child whose inputs are all in is ready
            metas = node._input_meta
            for i, ((child, nr), g) in enumerate(zip(node.next_functions, grad_inputs)):
                if child is None:
                    continue
                if g is not None:
                    # check it fits the input (NumPy shares dtype objects: ``is`` is the fast test;
                    # no local name for g._data: it would keep the array referenced, and
                    # AccumulateGrad reuses only arrays that nothing else holds)
                    shape, dtype = metas[i]
                    if g._data.shape != shape or (g._data.dtype is not dtype and g._data.dtype != dtype):
                        g = _fix_gradient(node, i, g, metas[i])
                    if plain and type(child) is AccumulateGrad and deps[child] == 1 and child not in buffers \
                            and child._tensor_hooks is None and child._pre_hooks is None and child._post_hooks is None:
                        # a leaf whose only gradient this is, without hooks: accumulate it now.  PyTorch's
                        # ready queue runs AccumulateGrad first anyway; this skips the heap round trip.
                        del deps[child]
                        accumulate_grad(child.variable, g)
                        continue
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child._num_outputs
                    # several paths meet here: sum their gradients
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                left = deps[child] - 1  # one fewer gradient to wait for
                deps[child] = left
                if left == 0:  # all are in: the child is ready
                    if child in buffers:
                        _heappush(heap, (-child._sequence_nr, next(ready), child))
                    else:
                        _skip(child, deps, buffers, heap, ready)  # no gradient reached it
    finally:
        _state["enabled"] = saved_mode
        _saved_tensor.exit_graph_task(previous_task)
    return captured


def _skip(node, deps, buffers, heap, ready):
    """A node that does not run still counts as done for the nodes below it."""
    stack = [node]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            deps[child] -= 1
            if deps[child] == 0:
                if child in buffers:
                    _heappush(heap, (-child._sequence_nr, next(ready), child))
                else:
                    stack.append(child)
