"""HookMonitor: watch module hooks fire, one event at a time.

``HookRecorder`` (no ipywidgets) registers the four module hooks PyTorch has,
on each chosen submodule:

====================  ==========================================  ==================
kind                  registered with                             called with
====================  ==========================================  ==================
``forward_pre``       ``register_forward_pre_hook``               ``(module, args)``
``forward``           ``register_forward_hook``                   ``(module, args, output)``
``backward_pre``      ``register_full_backward_pre_hook``         ``(module, grad_output)``
``backward``          ``register_full_backward_hook``             ``(module, grad_input, grad_output)``
====================  ==========================================  ==================

Every call becomes a ``HookEvent`` in ``recorder.events``, in the order the
framework made the calls. The hooks return ``None``, so they only watch: the
model computes exactly what it computes without them. ``detach()`` removes
every handle. ``HookMonitor`` is the view: step through the events with
prev/next or a slider and see the tensor each hook received.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._common import dtype_name, stats_of, to_numpy

HOOK_KINDS = ("forward_pre", "forward", "backward_pre", "backward")


@dataclass(frozen=True)
class TensorRecord:
    """One tensor (or ``None``) that a hook received."""

    role: str  # "input", "output", "grad_input" or "grad_output"
    index: int  # position inside the tuple the hook got
    shape: tuple | None  # None when the hook received None (e.g. grad of an input
    dtype: str | None    # that does not require grad)
    stats: object  # widgets._common.Stats or None
    values: object  # NumPy copy of the values, or None

    @property
    def label(self):
        return f"{self.role}[{self.index}]"


@dataclass(frozen=True)
class HookEvent:
    """One hook call: which module, which hook, and the tensors it saw."""

    index: int
    module_name: str
    class_name: str
    kind: str
    tensors: tuple  # of TensorRecord

    def records(self, role):
        return [t for t in self.tensors if t.role == role]

    def primary(self):
        """The tensor worth showing: what flows INTO the hook's direction of travel.

        forward_pre → the input, forward → the output, backward_pre → grad_output,
        backward → grad_input (falls back to grad_output when the input needs no grad).
        """
        order = {"forward_pre": ("input",), "forward": ("output",),
                 "backward_pre": ("grad_output",), "backward": ("grad_input", "grad_output")}
        for role in order[self.kind]:
            for record in self.records(role):
                if record.values is not None:
                    return record
        return None

    def describe(self):
        """A one-paragraph text description of the call."""
        what = {
            "forward_pre": "forward pre-hook: called BEFORE forward, receives the inputs",
            "forward": "forward hook: called AFTER forward, receives inputs and output",
            "backward_pre": "backward pre-hook: called when the gradient w.r.t. the "
                            "module's output is ready",
            "backward": "full backward hook: called when the gradients w.r.t. the "
                        "module's inputs are computed",
        }[self.kind]
        lines = [f"#{self.index} {self.kind} of '{self.module_name}' ({self.class_name}): {what}"]
        for t in self.tensors:
            if t.shape is None:
                lines.append(f"  {t.label}: None")
            elif t.stats is None:
                lines.append(f"  {t.label}: {t.shape} {t.dtype}")
            else:
                lines.append(f"  {t.label}: {t.shape} {t.dtype}  {t.stats}")
        return "\n".join(lines)


class HookRecorder:
    """Attach the four module hooks to chosen submodules and record every call in order.

    ``modules``: ``None`` for every leaf module (no children), or a list of
    qualified names (``"0"``, ``"encoder.fc"``) or module objects.
    ``keep_values``: keep a NumPy copy of each tensor (needed to draw it).
    ``max_events``: stop recording after this many events (a training loop left
    running with the hooks attached would otherwise fill the memory with
    copies); later calls are only counted in ``dropped`` until ``clear()``.
    Usable as a context manager: the hooks are removed on exit.
    """

    def __init__(self, module, modules=None, keep_values=True, max_events=1000):
        self.module = module
        self.keep_values = keep_values
        self.max_events = max_events
        self.module_names = self._choose(module, modules)
        self.events = []
        self.dropped = 0
        self.handles = []
        self.attach()

    @staticmethod
    def _choose(module, modules):
        named = list(module.named_modules())
        if modules is None:
            leaves = [name for name, m in named if next(m.children(), None) is None]
            return leaves or [""]
        names_of = {id(m): name for name, m in named}
        chosen = []
        for item in modules:
            if isinstance(item, str):
                if item not in dict(named):
                    raise KeyError(f"no submodule named {item!r}; named_modules() has "
                                   f"{[n for n, _ in named]}")
                chosen.append(item)
            elif id(item) in names_of:
                chosen.append(names_of[id(item)])
            else:
                raise ValueError(
                    f"{type(item).__name__} is not a submodule of the monitored module")
        return chosen

    def attach(self):
        """Register the hooks (done by the constructor; call again after ``detach()``)."""
        if self.handles:
            return
        submodules = dict(self.module.named_modules())
        for name in self.module_names:
            m = submodules[name]
            self.handles += [
                m.register_forward_pre_hook(self._forward_pre(name)),
                m.register_forward_hook(self._forward(name)),
                m.register_full_backward_pre_hook(self._backward_pre(name)),
                m.register_full_backward_hook(self._backward(name)),
            ]

    def detach(self):
        """Remove every hook this recorder registered."""
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def clear(self):
        """Forget the recorded events (the hooks stay attached)."""
        self.events = []
        self.dropped = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.detach()
        return False

    # -- the hooks: each is a closure that knows its module's name -----------------
    def _forward_pre(self, name):
        def hook(module, args):
            self._record(name, module, "forward_pre", [("input", args)])
        return hook

    def _forward(self, name):
        def hook(module, args, output):
            self._record(name, module, "forward", [("input", args), ("output", output)])
        return hook

    def _backward_pre(self, name):
        def hook(module, grad_output):
            self._record(name, module, "backward_pre", [("grad_output", grad_output)])
        return hook

    def _backward(self, name):
        def hook(module, grad_input, grad_output):
            self._record(name, module, "backward",
                         [("grad_input", grad_input), ("grad_output", grad_output)])
        return hook

    def _record(self, name, module, kind, groups):
        if len(self.events) >= self.max_events:
            self.dropped += 1
            return
        tensors = tuple(record for role, value in groups for record in self._records(role, value))
        self.events.append(HookEvent(len(self.events), name, type(module).__name__, kind, tensors))

    def _records(self, role, value):
        items = value if isinstance(value, (tuple, list)) else (value,)
        for i, item in enumerate(items):
            if item is None:
                yield TensorRecord(role, i, None, None, None, None)
            elif hasattr(item, "shape") and hasattr(item, "detach"):  # a tensor
                values = to_numpy(item)
                floating = values.dtype.kind in "fc"
                yield TensorRecord(role, i, tuple(item.shape), dtype_name(item),
                                   stats_of(values) if floating else None,
                                   values if self.keep_values else None)

    # -- reading the record -----------------------------------------------------------
    def summary(self):
        """``[(module_name, kind), ...]`` in call order: the shape of the story."""
        return [(e.module_name, e.kind) for e in self.events]
