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
While the profiler or anomaly mode is on, the step of each node goes through
their interceptors (``node_interceptors``, the same mechanism as
``function.apply_interceptors``).
"""
import heapq
import itertools

from . import _saved_tensor, grad_mode
from .function import Interceptors, accumulate_retained_grad
from .. import _dtype

node_interceptors = Interceptors()  # around every node the loop runs: fn(proceed, node, grads)


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
    queue = _ReadyQueue()
    buffers = {}  # node -> the gradients received so far, one slot per output
    for (node, nr), g in zip(roots, root_grads):
        if node is not None:
            _add_gradient(buffers, node, nr, g)
    for node in buffers:
        if deps.get(node, 0) == 0:
            queue.push(node)

    # this backward pass's id, read by saved-tensor hooks (torch._C._current_graph_task_id)
    previous_task = _saved_tensor.enter_graph_task(inputs is None)
    try:
        with grad_mode.set_grad_enabled(create_graph):  # backward formulas record only for create_graph
            _run_loop(queue, buffers, deps, targets, needed, captured, retain_graph)
    finally:
        _saved_tensor.exit_graph_task(previous_task)
    return captured


def _run_loop(queue, buffers, deps, targets, needed, captured, retain_graph):
    """The backward loop: pop a ready node, hooks, run it, free what it saved, send its gradients."""
    while queue:
        node = queue.pop()                                  # the newest node whose gradients are all in
        grads = buffers.pop(node)
        if targets is not None and node not in needed and node not in targets:
            _skip(node, deps, buffers, queue)               # off the path to the inputs: not even its hooks run
            continue
        if node._tensor_hooks or node._retained:            # register_hook, retain_grad
            grads = _call_tensor_hooks(node, grads)
        if targets is not None:                             # autograd.grad: keep what reaches a target
            if node in targets:
                captured.update(((node, nr), g) for nr, g in enumerate(grads))
            if node not in needed:
                _skip(node, deps, buffers, queue)
                continue
        if node_interceptors.active:                        # the profiler, anomaly mode
            grad_inputs = node_interceptors.run(_call_node, node, grads)
        else:
            grad_inputs = _call_node(node, grads)           # pre-hooks, backward, post-hooks
        if not retain_graph and node._for_backward:
            node._free_saved()
        _send(node, grad_inputs, deps, buffers, queue)      # along next_functions to the children


class _ReadyQueue(list):
    """Nodes whose gradients are all in, newest first (PyTorch's ready queue): a heap.

    Ordered by ``_sequence_nr`` (creation order; leaves' ``AccumulateGrad``
    nodes have the highest), ties in the order the nodes became ready.
    """

    def __init__(self):
        super().__init__()
        self.order = itertools.count()

    def push(self, node):
        heapq.heappush(self, (-node._sequence_nr, next(self.order), node))

    def pop(self):
        return heapq.heappop(self)[2]


def _add_gradient(buffers, node, nr, g):
    """Add ``g`` into slot ``nr`` of ``node``'s buffer: where several paths meet, gradients are summed."""
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._num_outputs
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def _send(node, grad_inputs, deps, buffers, queue):
    """Send each gradient along its edge; a child that has all its gradients is ready."""
    for i, ((child, nr), g) in enumerate(zip(node.next_functions, grad_inputs)):
        if child is None:
            continue
        if g is not None:
            shape, dtype = node._input_meta[i]
            if g._data.shape != shape or g._data.dtype != dtype:  # it must fit the input
                g = _fit_gradient(node, i, g, shape, dtype)
            _add_gradient(buffers, child, nr, g)
        deps[child] -= 1
        if deps[child] == 0:
            if child in buffers:
                queue.push(child)
            else:
                _skip(child, deps, buffers, queue)  # no gradient reached it


def _skip(node, deps, buffers, queue):
    """A node that does not run still counts as done for the nodes below it."""
    stack = [node]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            deps[child] -= 1
            if deps[child] == 0:
                if child in buffers:
                    queue.push(child)
                else:
                    stack.append(child)


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
                accumulate_retained_grad(tensor, grads[nr])
    return grads


def _call_node(node, grads):
    """Run one node: its pre-hooks, its backward, its post-hooks."""
    pre = node._pre_hooks
    if pre:
        for fn in list(pre.values()):
            new = fn(tuple(grads))
            if new is not None:
                grads = list(new)
    grad_inputs = node.apply(*grads)
    post = node._post_hooks
    if post:
        # a node whose inputs differ from its PyTorch counterpart's shows its hooks PyTorch's
        # gradients (``Linear``: of ``W.t()``, not ``W``); the change is its own inverse
        as_pytorch = getattr(getattr(node, "_forward_cls", None), "_hooked_grad_inputs", None)
        grad_inputs = as_pytorch(grad_inputs) if as_pytorch else grad_inputs
        for fn in list(post.values()):
            new = fn(grad_inputs, tuple(grads))
            if new is not None:
                grad_inputs = tuple(new)
        grad_inputs = as_pytorch(grad_inputs) if as_pytorch else grad_inputs
    return grad_inputs


def _fit_gradient(node, i, g, shape, dtype):
    """Make a gradient fit its input: sum a broadcast one back, cast the dtype.

    PyTorch's ``validate_outputs``: a gradient whose shape the input can be
    expanded to is summed back to the input's shape; any other shape is an error.
    """
    if g._data.shape != shape:
        if not _expandable(shape, g._data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g._data.shape)} but expected shape compatible with {list(shape)}"
            )
        g = g.sum_to_size(shape)
    if g._data.dtype != dtype:
        g = g.to(_dtype.from_numpy_dtype(dtype))
    return g


def _expandable(shape, target):
    """Can ``shape`` be broadcast (expanded) to ``target``?"""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))

