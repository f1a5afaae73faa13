"""Recording: where the engine's two profiler hooks lead.

``Function.apply`` (every op) and the backward engine's loop (every graph node)
each test one flag, ``function._profiler_state["on"]``; while a profiler
records, they call :func:`record_op` and :func:`record_node` here, which open
a :class:`~.profiler_util.FunctionEvent`, run the op or node, and close it.
Events opened while another is open become its children, which is how the
table knows self time from total time, and how Perfetto nests the bars.

One :class:`Recorder` records at a time (as in PyTorch, where a second
profiler inside the first is an error).
"""
import os
import threading
import time
import traceback
import weakref

from ..autograd import function as _function
from . import _names
from .profiler_util import EventList, FunctionEvent

_hook_state = _function._profiler_state
_clock_ns = time.perf_counter_ns
_thread_id = threading.get_native_id
_current = None  # the Recorder that is recording, or None
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Recorder:
    """The events of one recording window, with the options that say what to record."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events = []
        self._stacks = {}  # thread id -> the open events, innermost last
        self._t0_ns = _clock_ns()
        self.base_time_ns = time.time_ns()  # the wall clock at t0, for the Chrome trace

    # -- switching the engine's hooks -------------------------------------
    def start(self):
        global _current
        if _current is not None:
            raise RuntimeError("Can't profile: a profiler is already enabled on this thread.")
        _current = self
        _hook_state["record_op"] = record_op
        _hook_state["record_node"] = record_node
        _hook_state["on"] = True

    def stop(self):
        global _current
        if _current is self:
            _hook_state["on"] = False
            _current = None
        for stack in self._stacks.values():  # close what an exception left open
            while stack:
                self.end(stack[-1])

    # -- events ---------------------------------------------------------------
    def begin(self, name, cat="cpu_op", args=(), sequence_nr=-1):
        """Open an event; it ends with :meth:`end`.  ``args`` give the input shapes."""
        thread = _thread_id()
        stack = self._stacks.get(thread)
        if stack is None:
            stack = self._stacks[thread] = []
        shapes = [_shape(a) for a in args] if self.record_shapes else None
        frames = _python_stack() if self.with_stack else None
        event = FunctionEvent(len(self.events), name, thread, _clock_ns(), self._t0_ns, cat, shapes,
                              sequence_nr, frames)
        if stack:
            event.cpu_parent = parent = stack[-1]
            parent.cpu_children.append(event)
        stack.append(event)
        self.events.append(event)
        return event

    def end(self, event):
        event._end_ns = _clock_ns()
        stack = self._stacks[event.thread]
        while stack:  # pops ``event`` (and anything left open inside it)
            if stack.pop() is event:
                break

    def event_list(self):
        """The events in order of start, as an :class:`EventList`."""
        return EventList(sorted(self.events, key=lambda e: (e.start_us, e.id)),
                         profile_memory=self.profile_memory)

    # -- memory ---------------------------------------------------------------
    def count_allocations(self, event, outputs, args):
        """Charge ``event`` with the arrays its op returned that own new memory, and
        arrange for their release to be charged to the event open at that moment."""
        for out in outputs if isinstance(outputs, tuple) else (outputs,):
            data = getattr(out, "_data", None)
            if data is None or getattr(data, "base", 0) is not None or any(
                    getattr(a, "_data", None) is data for a in args):
                continue  # not a tensor, a view, or an input returned in place
            event.own_memory += data.nbytes
            try:
                weakref.finalize(data, _freed, self, data.nbytes)
            except TypeError:  # an array type without weak references
                pass


def _freed(recorder, nbytes):
    """An array counted by ``count_allocations`` was released: a negative record."""
    if recorder is _current:
        stack = recorder._stacks.get(threading.get_native_id())
        if stack:
            stack[-1].own_memory -= nbytes


def _shape(value):
    """PyTorch's "Input Dims" entry: a tensor's shape as a list, ``[]`` for anything else."""
    data = getattr(value, "_data", None)
    return list(data.shape) if data is not None and hasattr(data, "shape") else []


def _python_stack():
    """The Python frames that called the op, innermost first, as ``file(line): function``
    (with_stack).  edutorch's engine frames are left out, as PyTorch's C++ frames are;
    ``nn/modules`` frames stay, as ``torch/nn/modules`` frames do in PyTorch's stacks."""
    frames = traceback.extract_stack()[:-1]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_PACKAGE_DIR) or _MODULES_DIR in f.filename]


_MODULES_DIR = os.path.join("nn", "modules")


# -- the two hooks ------------------------------------------------------------------


def record_op(cls, args, kwargs):
    """``Function.apply`` while recording: the op as one event named as PyTorch names it."""
    recorder = _current
    event = recorder.begin(_names.op_name(cls), "cpu_op", args)
    try:
        _hook_state["entered"] = True  # the call below runs the op itself, not this hook again
        outputs = cls.apply(*args, **kwargs)
        first = outputs[0] if type(outputs) is tuple and outputs else outputs
        node = getattr(first, "grad_fn", None)
        if node is not None and node._forward_cls is cls:  # PyTorch links an op to its node by this number
            event.sequence_nr = node._sequence_nr
        if recorder.profile_memory:
            recorder.count_allocations(event, outputs, args)
        return outputs
    finally:
        recorder.end(event)


def record_node(node, grads, run_node):
    """The engine's step for one node while recording: PyTorch's two nested events,
    ``autograd::engine::evaluate_function: <node>`` around ``<node>`` around its backward."""
    recorder = _current
    name = _names.node_name(node)
    sequence_nr = getattr(node, "_sequence_nr", -1)
    sequence_nr = sequence_nr if sequence_nr < 2**62 else -1  # AccumulateGrad has none
    outer = recorder.begin("autograd::engine::evaluate_function: " + name, "cpu_op", (), sequence_nr)
    try:
        inner = recorder.begin(name, "cpu_op", grads, sequence_nr)
        try:
            grad_inputs = run_node(node, grads)
            if recorder.profile_memory:
                recorder.count_allocations(inner, tuple(grad_inputs), grads)
            return grad_inputs
        finally:
            recorder.end(inner)
    finally:
        recorder.end(outer)


class record_function:
    """Label a block of code in the profile (``torch.profiler.record_function``).

    As a context manager (``with record_function("forward"): ...``) or a
    decorator; the block becomes an event of that name, and every op inside it
    its child.  Costs nothing when no profiler records.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None
        self._recorder = None

    def __enter__(self):
        recorder = _current
        if recorder is not None:
            self._recorder = recorder
            self._event = recorder.begin(self.name, "user_annotation")
        return self

    def __exit__(self, *exc_info):
        if self._event is not None:
            self._recorder.end(self._event)
            self._event = self._recorder = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper
