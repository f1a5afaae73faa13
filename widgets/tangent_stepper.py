"""TangentStepper: forward-mode AD one op at a time, the tangent travelling WITH the values.

``BackwardStepper`` replays ``backward()``: gradients flow from the output back
to the inputs, after the forward pass. Forward mode has no second pass: every
input carries a *tangent* (a direction ``v``), and each op computes its output
and the output's tangent together — the dual number ``x + ε·ẋ`` with
``ε² = 0``. When the last op has run, the output's tangent is ``J·v``, one
Jacobian–vector product (``torch.func.jvp``).

``TangentTrace`` (no ipywidgets) makes that visible with two public APIs that
PyTorch and edutorch share:

=====================================  =============================================
API                                    used for
=====================================  =============================================
``torch.fx.symbolic_trace(fn)``        the ops of ``fn`` as a graph, in forward order
``torch.fx.Interpreter.run_node``      runs the graph one node at a time
``torch.autograd.forward_ad``          ``dual_level``, ``make_dual`` (the inputs) and
                                       ``unpack_dual`` (each node's primal, tangent)
=====================================  =============================================

It runs ``fn`` once on dual inputs, node by node, and records every node's
primal value and tangent (``None``: no tangent reached it, which forward AD
treats as zero). ``fn`` is a function of tensors or an ``nn.Module`` that returns
one tensor; it must be traceable by ``torch.fx`` (no Python branch on tensor
values).
"""
from __future__ import annotations

import operator
import sys
from dataclasses import dataclass

from ._common import to_numpy
from .backward_stepper import Box, GradRecord, Layout


class ValueRecord(GradRecord):
    """A primal value or a tangent, kept as ``GradRecord`` keeps a gradient (copy, statistics)."""

    SYMBOL = "·"


#: the tangent rule of common ops, as a learner writes it (ẋ: the tangent of the input x);
#: an op not listed shows the general rule, J·ẋ
RULES = {
    "placeholder": "ẋ = the tangent given to make_dual",
    "add": "ẋ + ẏ", "sub": "ẋ − ẏ", "mul": "ẋ·y + x·ẏ", "truediv": "(ẋ − (x/y)·ẏ) / y",
    "neg": "−ẋ", "pow": "n·xⁿ⁻¹·ẋ", "matmul": "Ẋ·Y + X·Ẏ", "square": "2x·ẋ",
    "sin": "cos(x)·ẋ", "cos": "−sin(x)·ẋ", "exp": "exp(x)·ẋ", "log": "ẋ / x",
    "sqrt": "ẋ / (2·√x)", "tanh": "(1 − tanh²(x))·ẋ", "sigmoid": "σ(x)·(1 − σ(x))·ẋ",
    "relu": "ẋ where x > 0, else 0", "sum": "sum(ẋ)", "mean": "mean(ẋ)",
    "stack": "stack(ẋ, ẏ, …)", "cat": "cat(ẋ, ẏ, …)",
    "Linear": "ẋ·Wᵀ + x·Ẇᵀ + ḃ (Ẇ = ḃ = 0: the parameters carry no tangent)",
    "Tanh": "(1 − tanh²(x))·ẋ", "ReLU": "ẋ where x > 0, else 0", "Sigmoid": "σ(x)·(1 − σ(x))·ẋ",
}
GENERAL_RULE = "J·ẋ (the op's own tangent formula)"


@dataclass(frozen=True)
class TangentNode:
    """One node of the traced graph, in forward order (placeholders first)."""

    index: int
    name: str  # the fx node's name: "x", "mul", "sum_1"
    op: str  # "placeholder", "call_function", "call_method", "call_module", "get_attr"
    what: str  # the op: "mul", "sin", "Linear (fc1)", or the input's name
    inputs: tuple  # indices of the nodes it reads
    users: int  # how many nodes read it: 2+ means its tangent is used twice

    @property
    def label(self):
        """The text in the node's box: the input's name, or the op."""
        return self.what

    @property
    def rule(self):
        key = "placeholder" if self.op == "placeholder" else self.what.split(" ")[0]
        return RULES.get(key, GENERAL_RULE)


@dataclass(frozen=True)
class TangentEvent:
    """One node run on dual numbers: its primal value and its tangent (None: no tangent)."""

    index: int
    node: int
    primal: ValueRecord
    tangent: ValueRecord | None


def _library_of(fn, values):
    """``torch`` or ``edutorch``: the library of the module ``fn`` or of the first tensor."""
    for obj in (fn, *values):
        for klass in type(obj).__mro__:
            root = klass.__module__.split(".")[0]
            if root in ("torch", "edutorch") and root in sys.modules:
                return sys.modules[root]
    raise TypeError("expected edutorch or torch tensors (or an nn.Module)")


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _what(node, submodules):
    """The op a node runs, as a learner would name it."""
    if node.op == "placeholder":
        return node.target
    if node.op == "call_module":
        return f"{type(submodules[node.target]).__name__} ({node.target})"
    if node.op == "call_function":
        name = getattr(node.target, "__name__", str(node.target))
        return "mul" if node.target is operator.mul else name
    return str(node.target)  # call_method, get_attr


class TangentTrace:
    """Run ``fn(*primals)`` once on dual numbers, node by node, recording each node's tangent.

    ``primals``/``tangents``: a tensor or a tuple of tensors, one tangent per
    primal of the same shape (``None``: that input carries no tangent). The
    result is ``torch.func.jvp(fn, primals, tangents)``: ``output_primal`` and
    ``output_tangent`` (NumPy copies).
    """

    def __init__(self, fn, primals, tangents):
        primals, tangents = _as_tuple(primals), _as_tuple(tangents)
        if len(primals) != len(tangents):
            raise ValueError(f"{len(primals)} primals but {len(tangents)} tangents: give one "
                             "tangent per primal (None for an input without one)")
        self.lib = _library_of(fn, primals)
        self.graph_module = self.lib.fx.symbolic_trace(fn)
        submodules = dict(self.graph_module.named_modules())
        graph_nodes = [n for n in self.graph_module.graph.nodes if n.op != "output"]
        position = {n: i for i, n in enumerate(graph_nodes)}
        self.nodes = [TangentNode(i, n.name, n.op, _what(n, submodules),
                                  tuple(position[m] for m in n.all_input_nodes if m in position),
                                  sum(1 for user in n.users if user in position))
                      for i, n in enumerate(graph_nodes)]
        self.events = []
        self._position = position
        self._run(primals, tangents)

    def _run(self, primals, tangents):
        forward_ad = self.lib.autograd.forward_ad
        trace = self

        class Recorder(self.lib.fx.Interpreter):
            def run_node(self, node):
                value = super().run_node(node)
                if node in trace._position:
                    trace._record(trace._position[node], value, forward_ad)
                return value

        with forward_ad.dual_level():
            duals = [p if t is None else forward_ad.make_dual(p, t)
                     for p, t in zip(primals, tangents)]
            output = Recorder(self.graph_module).run(*duals)
            if not hasattr(output, "shape"):
                raise TypeError(f"fn must return one tensor, got {type(output).__name__}: "
                                "step through one output at a time")
            primal, tangent = forward_ad.unpack_dual(output)
            self.output_primal = to_numpy(primal)
            self.output_tangent = None if tangent is None else to_numpy(tangent)

    def _record(self, i, value, forward_ad):
        if not hasattr(value, "shape"):  # a Python number or a tuple: nothing to show
            primal, tangent = value, None
        else:
            primal, tangent = forward_ad.unpack_dual(value)
            primal = ValueRecord.of(primal)
            tangent = ValueRecord.of(tangent)
        self.events.append(TangentEvent(len(self.events), i, primal, tangent))

    # -- reading the trace -----------------------------------------------------------------
    def order(self):
        """The nodes in the order they ran: ``["x", "mul", "sin", ...]``."""
        return [self.nodes[e.node].name for e in self.events]

    def state(self, step):
        """``(states, current)`` after ``step`` events: a state per node, the current event.

        ``"done"``: ran (primal and tangent known); ``"receiving"``: some input is
        done, the node is waiting for the rest; ``"pending"``; ``"current"``.
        """
        if not 0 <= step <= len(self.events):
            raise IndexError(f"step {step} out of range 0..{len(self.events)}")
        states = ["pending"] * len(self.nodes)
        for e in self.events[:step]:
            states[e.node] = "done"
        for node in self.nodes:
            if states[node.index] == "pending" and any(states[i] == "done" for i in node.inputs):
                states[node.index] = "receiving"
        current = self.events[step - 1] if step else None
        if current is not None:
            states[current.node] = "current"
        return states, current

    def event_of(self, node):
        return next(e for e in self.events if e.node == node)

    def describe(self, step):
        """What happened at ``step``, as text lines (what the view prints)."""
        _, event = self.state(step)
        if event is None:
            inputs = [n.name for n in self.nodes if n.op == "placeholder"]
            return [f"before the forward pass: {len(self.nodes)} nodes, inputs {', '.join(inputs)}.",
                    "make_dual(primal, tangent) gives each input its tangent; the ops then carry "
                    "it forward."]
        node = self.nodes[event.node]
        if node.op == "placeholder":
            lines = [f"step {step}: input [{node.index}] {node.name} = make_dual(primal, tangent)"]
        else:
            sources = ", ".join(f"[{i}] {self.nodes[i].name}" for i in node.inputs)
            lines = [f"step {step}: run node [{node.index}] {node.what} on {sources or 'constants'}"]
            for i in node.inputs:
                arriving = self.event_of(i).tangent
                lines.append(f"  tangent arriving from [{i}] {self.nodes[i].name}: "
                             f"{_text(arriving)}")
        lines.append(f"  primal:  {_text(event.primal)}")
        lines.append(f"  tangent: {_text(event.tangent)}   rule: {node.rule}")
        if event.node == self.nodes[-1].index:
            lines.append("  the output: its tangent is J·v, one Jacobian-vector product")
        elif node.users > 1:
            lines.append(f"  its tangent goes on to {node.users} nodes")
        return lines


def _text(record):
    return "None (no tangent: zero)" if record is None else str(record)


# -- the picture's layout -------------------------------------------------------------------
def layout(trace):
    """Boxes in levels, the inputs on top and every arrow pointing down (the way tangents go)."""
    level = []
    for node in trace.nodes:  # forward order: inputs come before the nodes that read them
        level.append(max((level[i] + 1 for i in node.inputs), default=0))
    rows = {}
    for node in trace.nodes:
        rows.setdefault(level[node.index], []).append(node.index)
    counts = {}
    for node in trace.nodes:
        for i in node.inputs:
            counts[(i, node.index)] = counts.get((i, node.index), 0) + 1
    # a level that an arrow passes through (h used two levels further down) keeps a free
    # slot on its right, so the arrow does not run hidden behind that level's boxes
    crossed = {lv for a, b in counts for lv in range(level[a] + 1, level[b])}
    slots = {lv: len(row) + (lv in crossed) for lv, row in rows.items()}
    column = {i: k for row in rows.values() for k, i in enumerate(row)}
    boxes = [Box(("node", n.index), n.label, (n.index,), level[n.index], column[n.index],
                 slots[level[n.index]], is_leaf=n.op == "placeholder", shared=n.users > 1)
             for n in trace.nodes]
    edges = [(a, b, count) for (a, b), count in counts.items()]
    return Layout(boxes, edges, {n.index: n.index for n in trace.nodes})


def consumers(trace, node):
    """The nodes that read ``node``'s value (and so its tangent)."""
    return [n.index for n in trace.nodes if node in n.inputs]
