"""BackwardStepper: ``loss.backward()`` node by node, in the engine's real order.

``BackwardTrace`` (no ipywidgets) walks the ``grad_fn`` graph below a scalar
through ``next_functions`` and puts a hook on every node with the public hook
API PyTorch has:

==========================  ===================================  =====================
hook                        registered with                      tells us
==========================  ===================================  =====================
node pre-hook               ``grad_fn.register_prehook(fn)``     the node is about to
                                                                 run; the gradient(s)
                                                                 arriving at it
node post-hook              ``grad_fn.register_hook(fn)``        the gradients it sends
                                                                 along ``next_functions``
tensor hook                 ``tensor.register_hook(fn)``         a watched tensor's
                                                                 gradient is ready
==========================  ===================================  =====================

It then calls ``output.backward()`` once. The engine calls the hooks in the
order it runs the nodes, so ``trace.events`` *is* the execution order: PyTorch's
ready queue, where a node runs once every gradient for it has arrived (the
contributions of several paths summed: a shared subexpression, or a leaf used
twice), the newest ready node first (highest sequence number) and an
``AccumulateGrad`` node (which adds into a leaf's ``.grad``) before all others.
The hooks return ``None``: they only watch, and are removed after the pass.

Big graphs (an MLP with its loss, a few hundred nodes) are grouped by module:
``ModuleScopes`` watches a forward pass with module hooks and assigns each
node to the module whose forward created it (the nodes reachable from the
module's output but not from its inputs). The layout (``layout``) draws a
group as one box until the user expands it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._common import numpy_view, stats_of
from .autograd_graph import postorder

STATES = ("pending", "receiving", "done", "current")  # what the view colours


#: a gradient of up to this many entries is kept whole; a larger one as a strided
#: subsample of at most DISPLAY x DISPLAY (what the picture shows), its statistics exact
FULL_ENTRIES = 1 << 12
DISPLAY = 48


@dataclass(frozen=True)
class GradRecord:
    """One gradient seen by a hook: its shape, its values (a copy) and its statistics.

    ``values`` is a copy of the whole gradient when it has at most ``FULL_ENTRIES``
    entries, otherwise every k-th row and column of it as a matrix (``sampled``
    True): a 2,000-node graph of 16 K-entry gradients keeps kilobytes per node,
    not the gradients themselves.
    """

    shape: tuple
    values: object  # NumPy array
    stats: object  # widgets._common.Stats (of every entry)
    sampled: bool = False
    SYMBOL = "g"  # what __str__ calls the values: |g| for a gradient

    @classmethod
    def of(cls, tensor):
        if tensor is None:
            return None
        values = numpy_view(tensor)
        stats = stats_of(values)
        if values.size <= FULL_ENTRIES:
            return cls(tuple(tensor.shape), np.array(values, copy=True), stats)
        matrix = values.reshape(values.shape[0], -1) if values.ndim > 1 else values.reshape(1, -1)
        step_r = -(-matrix.shape[0] // DISPLAY)
        step_c = -(-matrix.shape[1] // DISPLAY)
        return cls(tuple(tensor.shape), np.array(matrix[::step_r, ::step_c]), stats, True)

    def __str__(self):
        shape = "scalar" if self.shape == () else "×".join(map(str, self.shape))
        if self.values.size == 1 and not self.sampled:
            return f"{shape} = {self.values.reshape(-1)[0]:.4g}"
        largest = max(abs(self.stats.min), abs(self.stats.max))
        return f"{shape}, norm {self.stats.norm:.4g}, max |{self.SYMBOL}| {largest:.3g}"


@dataclass(frozen=True)
class NodeInfo:
    """One node of the graph (``nodes[0]`` is ``output.grad_fn``), in top-down order."""

    index: int
    name: str  # class name: "MulBackward0", "AccumulateGrad"
    is_leaf: bool  # an AccumulateGrad node: writes a leaf's .grad
    tensor: str | None  # the leaf's name, or the watched tensor(s) this node produced
    retained: bool  # a non-leaf whose tensor called retain_grad()
    group: str | None  # the module that created it (None: outside every module)
    children: tuple  # ((child index or None, input_nr), ...): next_functions
    uses: int  # how many edges point to it: 2+ means a shared subexpression

    @property
    def label(self):
        """The text in the node's box."""
        if self.is_leaf:
            return f"{self.tensor or 'leaf'}.grad +="
        return f"{self.name} ({self.tensor})" if self.tensor else self.name


@dataclass(frozen=True)
class BackwardEvent:
    """One thing the engine did: run a node, or call a watched tensor's hook."""

    index: int
    kind: str  # "node"
    node: int  # the node that ran
    tensor: str | None = None  # unused (kept for the dataclass's field order)
    arriving: tuple = ()  # GradRecord per output of the node, after every contribution
    contributions: tuple = ()  # ((sender node, GradRecord), ...) that were summed into it
    sent: tuple = ()  # ((child node or None, GradRecord or None), ...) per next_functions edge
    grad_before: GradRecord | None = None  # AccumulateGrad: the leaf's .grad before
    grad_after: GradRecord | None = None  # ... and after (the accumulation)


# -- the graph ---------------------------------------------------------------------------
def top_down(root):
    """Every node below ``root``, each before every node it points to (reversed post-order)."""
    return postorder(root)[::-1]


def reachable(starts, stop=frozenset()):
    """Nodes reachable from ``starts`` through ``next_functions``, not walking into ``stop``."""
    seen = set()
    stack = [n for n in starts if n is not None and n not in stop]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(c for c, _ in node.next_functions if c is not None and c not in stop)
    return seen


class ModuleScopes:
    """Watch a forward pass and remember which module created which graph nodes.

    >>> with ModuleScopes(model) as scopes:
    ...     out = model(x)
    >>> scopes.group_of(node, depth=1)   # "0", "1", ... (top-level children) or None

    Uses only ``register_forward_pre_hook``/``register_forward_hook``: a
    module's nodes are those reachable from its output's ``grad_fn`` but not
    from its inputs' (each node belongs to the innermost module).
    """

    def __init__(self, module):
        self.module = module
        self.calls = []  # (module name, depth, input grad_fns, output grad_fns)
        self.handles = []
        self._pending = {}
        for name, m in module.named_modules():
            self.handles += [m.register_forward_pre_hook(self._pre(name)),
                             m.register_forward_hook(self._post(name))]
        self._owner = None

    def _pre(self, name):
        def hook(module, args):
            self._pending.setdefault(name, []).append(_grad_fns(args))
        return hook

    def _post(self, name):
        def hook(module, args, output):
            inputs = self._pending[name].pop()
            depth = name.count(".") + 1 if name else 0
            self.calls.append((name, depth, inputs, _grad_fns(output)))
            self._owner = None  # new nodes: recompute the assignment
        return hook

    def detach(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.detach()
        return False

    def owners(self):
        """``{node: module name}``, the innermost module whose forward created the node."""
        if self._owner is None:
            owner = {}
            for name, _, inputs, outputs in sorted(self.calls, key=lambda c: -c[1]):
                before = reachable(inputs)
                for node in reachable(outputs, stop=before):
                    owner.setdefault(node, name)
            self._owner = owner
        return self._owner

    def group_of(self, node, depth=1):
        """The module at most ``depth`` levels deep that holds ``node``: ``"2"`` for a node
        made in ``"2.0"`` at depth 1, ``""`` for the root module, None outside the model."""
        name = self.owners().get(node)
        return None if name is None else ".".join(name.split(".")[:depth])

    def parameter_names(self):
        """``{id(parameter): qualified name}`` for naming leaves."""
        return {id(p): n for n, p in self.module.named_parameters()}


def _grad_fns(value):
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [t.grad_fn for t in items if getattr(t, "grad_fn", None) is not None]


# -- the trace -----------------------------------------------------------------------------
class BackwardTrace:
    """Run ``output.backward()`` once with hooks on every node and record what happens.

    ``tensors``: ``{name: tensor}`` to watch (a hook on each; leaves are named
    after them, non-leaves label the node that produced them); ``scopes``: a
    ``ModuleScopes`` that watched the forward pass (groups, parameter names);
    ``depth``: how deep in the module tree groups are cut (1: top-level
    children). ``gradient``/``retain_graph`` go to ``backward`` unchanged.
    Gradients accumulate into ``.grad`` as usual.
    """

    def __init__(self, output, tensors=None, scopes=None, depth=1, gradient=None,
                 retain_graph=None):
        if output.grad_fn is None:
            raise ValueError("this tensor has no grad_fn: it is a leaf or does not require grad")
        if gradient is None and output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        self.output = output
        self.tensors = dict(tensors or {})
        self.scopes = scopes
        self.depth = depth
        self._objects = top_down(output.grad_fn)
        self._index = {node: i for i, node in enumerate(self._objects)}
        self.nodes = self._describe_nodes()
        self.events = []
        self._record(gradient, retain_graph)
        modules = dict(scopes.module.named_modules()) if scopes is not None else {}
        order = {name: i for i, name in enumerate(modules)}
        #: the module groups, in ``named_modules()`` order
        self.groups = sorted({n.group for n in self.nodes if n.group is not None},
                             key=lambda g: order.get(g, -1))
        #: ``{group: "Linear"}``: the class of the module each group stands for
        self.group_classes = {g: type(modules[g]).__name__ for g in self.groups if g in modules}

    # -- what each node is -------------------------------------------------------------
    def _describe_nodes(self):
        names = {}  # node -> names of watched tensors it produced / leaf it accumulates
        retained = set()
        params = self.scopes.parameter_names() if self.scopes is not None else {}
        for name, t in self.tensors.items():
            node = t.grad_fn
            if node is None:  # a leaf: found below through AccumulateGrad.variable
                params[id(t)] = name
            elif node in self._index:
                names.setdefault(node, []).append(name)
                if t.retains_grad:
                    retained.add(node)
        uses = {}
        for node in self._objects:
            for child, _ in node.next_functions:
                if child is not None:
                    uses[child] = uses.get(child, 0) + 1
        infos = []
        for i, node in enumerate(self._objects):
            cls = type(node).__name__
            leaf = cls == "AccumulateGrad"
            if leaf:
                variable = node.variable
                tensor = params.get(id(variable)) or "×".join(map(str, variable.shape)) or "leaf"
            else:
                tensor = ", ".join(names.get(node, [])) or None
            group = None
            if self.scopes is not None:
                group = self.scopes.group_of(node, self.depth)
            children = tuple((self._index.get(c), nr) for c, nr in node.next_functions)
            infos.append(NodeInfo(i, cls, leaf, tensor, node in retained, group, children,
                                  uses.get(node, 0)))
        return infos

    # -- recording -------------------------------------------------------------------------
    def _record(self, gradient, retain_graph):
        """Hooks on every node (removed after the pass), then one ``backward``.

        Only node hooks: the gradient of a watched tensor is what arrives at the
        node that made it (or at its AccumulateGrad), so the stepper registers no
        tensor hook that could look like one of the student's own.
        """
        self._open = {}  # node index -> event dict being filled (pre-hook to post-hook)
        self._in_flight = {}  # (node, input_nr) -> (gradient sent on its only edge, GradRecord)
        handles = []
        try:
            for i, node in enumerate(self._objects):
                handles.append(node.register_prehook(self._pre_hook(i)))
                handles.append(node.register_hook(self._post_hook(i)))
            self.output.backward(gradient, retain_graph=retain_graph)
        finally:
            for handle in handles:
                handle.remove()
            self._in_flight.clear()  # gradients sent to nodes that never ran
        received = {}  # node -> ((sender, GradRecord), ...) sent to it so far
        frozen = []
        for event in self.events:
            frozen.append(BackwardEvent(index=len(frozen),
                                        contributions=tuple(received.get(event["node"], ())),
                                        **event))
            for child, record in event["sent"]:
                if child is not None and record is not None:
                    received.setdefault(child, []).append((event["node"], record))
        self.events = frozen

    def _pre_hook(self, i):
        def hook(grad_outputs):
            event = {"kind": "node", "node": i,
                     "arriving": tuple(self._arriving(i, nr, g) for nr, g in enumerate(grad_outputs))}
            if self.nodes[i].is_leaf:
                event["grad_before"] = GradRecord.of(self._objects[i].variable.grad)
            self.events.append(event)
            self._open[i] = event
        return hook

    def _post_hook(self, i):
        def hook(grad_inputs, grad_outputs):
            event = self._open.pop(i)
            sent = []
            for (child, nr), g in zip(self.nodes[i].children, grad_inputs):
                record = GradRecord.of(g)
                if child is not None and g is not None and self.nodes[child].uses == 1:
                    self._in_flight[(child, nr)] = (g, record)
                sent.append((child, record))
            event["sent"] = tuple(sent)
            if self.nodes[i].is_leaf:
                event["grad_after"] = GradRecord.of(self._objects[i].variable.grad)
        return hook

    def _arriving(self, i, nr, g):
        """The record of gradient ``g`` arriving at input ``nr`` of node ``i``.

        A node with one incoming edge receives the very tensor its parent sent (nothing
        is summed into it), so the parent's record is reused: half the statistics of a
        long chain. Anything else (several edges, a hook that returned a new tensor, a
        gradient reshaped to fit) is a different tensor and gets its own record.
        """
        sent, record = self._in_flight.pop((i, nr), (None, None))
        return record if g is not None and g is sent else GradRecord.of(g)

    # -- reading the trace -------------------------------------------------------------------
    def node_events(self):
        return [e for e in self.events if e.kind == "node"]

    def order(self):
        """The nodes in execution order: ``["MulBackward0", "AccumulateGrad(x)", ...]``."""
        return [self._name(self.nodes[e.node]) for e in self.node_events()]

    def order_text(self):
        """The order as one line, AccumulateGrad nodes that were ready together in braces:
        PyTorch runs them first but leaves their order among themselves undefined."""
        return " → ".join(item if isinstance(item, str) else "{" + ", ".join(item) + "}"
                          for item in _canonical(self.order()))

    @staticmethod
    def _name(node):
        return f"AccumulateGrad({node.tensor})" if node.is_leaf else node.name

    def state(self, step):
        """``(states, current)`` after ``step`` events: a state name per node, the current event.

        ``step`` 0 is before backward; ``step`` k has run ``events[:k]``.
        """
        if not 0 <= step <= len(self.events):
            raise IndexError(f"step {step} out of range 0..{len(self.events)}")
        states = ["pending"] * len(self.nodes)
        states[0] = "receiving"  # backward seeds the root with the gradient (1.0)
        for e in self.events[:step]:
            if e.kind == "node":
                states[e.node] = "done"
                for child, record in e.sent:
                    if child is not None and record is not None and states[child] == "pending":
                        states[child] = "receiving"
        current = self.events[step - 1] if step else None
        if current is not None:
            states[current.node] = "current"
        return states, current

    def describe(self, step):
        """What happened at ``step``, as text lines (what the view prints)."""
        _, event = self.state(step)
        if event is None:
            return [(f"before backward: {len(self.nodes)} nodes, "
                    f"{len(self.node_events())} will run."),
                    f"output.backward() seeds {self.nodes[0].name} with d output/d output = 1."]
        node = self.nodes[event.node]
        where = f"  (module '{node.group}')" if node.group else ""
        lines = [f"step {event.index + 1}: run node [{node.index}] {node.name}{where}"]
        if len(event.contributions) > 1:
            lines.append(f"  {len(event.contributions)} gradients arrived and were summed "
                         f"({'leaf' if node.is_leaf else 'shared subexpression'} used "
                         f"{len(event.contributions)} times):")
            for sender, record in event.contributions:
                lines.append(f"    from [{sender}] {self.nodes[sender].name}: {record}")
        for k, record in enumerate(event.arriving):
            lines.append(f"  grad_output[{k}] arriving: {record}")
        if node.is_leaf:
            before = "None" if event.grad_before is None else str(event.grad_before)
            lines.append(f"  AccumulateGrad: {node.tensor}.grad = {before}  →  "
                         f"{event.grad_after}")
        for k, (child, record) in enumerate(event.sent):
            target = "nothing (input needs no grad)" if child is None else \
                f"[{child}] {self.nodes[child].label}"
            lines.append(f"  sends grad_input[{k}] → {target}: {record}")
        if node.retained:
            lines.append(f"  {node.tensor}.grad is kept (retain_grad)")
        return lines


# -- the picture's layout ---------------------------------------------------------------------
@dataclass(frozen=True)
class Box:
    """One box of the drawn graph: a node, or a collapsed module group."""

    key: tuple  # ("node", index) or ("group", name)
    label: str
    members: tuple  # node indices inside
    level: int
    column: int
    width: int  # boxes sharing the level
    is_leaf: bool = False
    shared: bool = False  # a shared subexpression (2+ uses)
    retained: bool = False


@dataclass
class Layout:
    boxes: list
    edges: list  # (box index, box index, count)
    box_of: dict = field(default_factory=dict)  # node index -> box index

    @property
    def levels(self):
        return 1 + max(b.level for b in self.boxes)


def layout(trace, expanded=()):
    """Boxes in levels (the root on top, every arrow pointing down), groups collapsed
    unless their name is in ``expanded`` (``"*"``: all expanded)."""
    nodes = trace.nodes
    def key_of(n):
        if n.group is None or "*" in expanded or n.group in expanded:
            return ("node", n.index)
        return ("group", n.group)
    keys, members = [], {}
    for n in nodes:  # top-down order: a box's first member decides its place
        key = key_of(n)
        if key not in members:
            keys.append(key)
            members[key] = []
        members[key].append(n.index)
    position = {key: i for i, key in enumerate(keys)}
    box_of = {i: position[key] for key in keys for i in members[key]}
    edge_count = {}
    for n in nodes:
        for child, _ in n.children:
            if child is not None and box_of[child] != box_of[n.index]:
                pair = (box_of[n.index], box_of[child])
                edge_count[pair] = edge_count.get(pair, 0) + 1
    parents = {}
    for a, b in edge_count:
        if a < b:  # boxes are in a topological order (a back edge would need overlapping modules)
            parents.setdefault(b, []).append(a)
    level = [0] * len(keys)
    for b in range(len(keys)):
        level[b] = max((level[a] + 1 for a in parents.get(b, ())), default=0)
    rows = {}
    for b in range(len(keys)):
        rows.setdefault(level[b], []).append(b)
    column = {b: k for row in rows.values() for k, b in enumerate(row)}
    boxes = []
    for b, key in enumerate(keys):
        inside = tuple(members[key])
        if key[0] == "node":
            n = nodes[key[1]]
            boxes.append(Box(key, n.label, inside, level[b], column[b], len(rows[level[b]]),
                             n.is_leaf, n.uses > 1 and not n.is_leaf, n.retained))
        else:
            kind = trace.group_classes.get(key[1], "module")
            label = f"[+] {key[1] or '(root)'}: {kind}, {len(inside)} node{'s' * (len(inside) > 1)}"
            boxes.append(Box(key, label, inside, level[b], column[b], len(rows[level[b]])))
    edges = [(a, b, count) for (a, b), count in edge_count.items()]
    return Layout(boxes, edges, box_of)


def box_states(layout_, states):
    """One state per box: a group is 'current' if it holds the current node, 'done' when
    all its nodes ran, 'receiving' when some did or got a gradient."""
    result = []
    for box in layout_.boxes:
        inside = [states[i] for i in box.members]
        if "current" in inside:
            result.append("current")
        elif all(s == "done" for s in inside):
            result.append("done")
        elif any(s != "pending" for s in inside):
            result.append("receiving")
        else:
            result.append("pending")
    return result


def compare_orders(a, b):
    """Execution orders as PyTorch defines them: a run of AccumulateGrad nodes ready at
    the same time may run in any order (they tie at the highest priority), so each run
    is compared as a sorted tuple; everything else must match one by one."""
    return _canonical(a) == _canonical(b)


def _canonical(labels):
    out, run = [], []
    for label in labels:
        if label.startswith("AccumulateGrad"):
            run.append(label)
            continue
        if run:
            out.append(tuple(sorted(run)))
            run = []
        out.append(label)
    if run:
        out.append(tuple(sorted(run)))
    return out
