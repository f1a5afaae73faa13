"""Recording: the profiler's two interceptors, and the log they write.

While a profiler records, it registers its interceptors with autograd
(``function.Interceptors``, the one extension point of ``Function.apply``):
:func:`record_op` around every op, :func:`record_composite` around every op
written as other ops (``F.cross_entropy``, ``matmul``), :func:`record_inplace`
around every in-place op (``x.add_(y)``, the optimizers' updates) and :func:`record_node`
around every node the backward engine runs, which time the op or node.  When no profiler
records, nothing is registered and autograd pays one test per op.

Recording must cost little next to the op it times, so it only writes raw
*records* (a small list: name, thread, start and end on the clock, ...) into
one log, in the order things happen: a record is appended when it opens and
appended again when it closes.  The :class:`~.profiler_util.FunctionEvent`
objects PyTorch's API returns are built from the log only when they are asked
for (``events()``, ``key_averages()``, ``export_chrome_trace``): replaying the
log, an event opened while another is open on its thread becomes its child,
which is how the table knows self time from total time, and how Perfetto nests
the bars (PyTorch's Kineto likewise records raw activity and builds
``FunctionEvent`` objects after the profile).

One :class:`Recorder` records at a time (as in PyTorch, where a second
profiler inside the first is an error).
"""
import os
import threading
import time
import traceback
import weakref

from ..autograd import engine as _engine, function as _function
from . import _names
from .profiler_util import EventList, FunctionEvent

_LEVEL = 0  # the outermost interceptor: an op's record includes everything it does (autocast's casts)
_KERNEL_LEVEL = 9  # the innermost: around the op's forward itself, after autocast's casts
_clock_ns = time.perf_counter_ns
_this_thread = threading.local()  # .id: the thread's system id, asked once per thread
_current = None  # the Recorder that is recording, or None
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MODULES_DIR = os.path.join("nn", "modules")  # frames kept in with_stack, as torch/nn/modules ones

# The fields of a record (a list, so that closing it can fill in the end time).
NAME, CAT, THREAD, START, END, SHAPES, SEQUENCE_NR, STACK, MEMORY, TRACE_NAME = range(10)
_STOP = "stop"  # the log entry written when recording stops: whatever is still open ends there


class Recorder:
    """The log of one recording window, with the options that say what to record.

    The log holds, in order: each record when it opens and again when it
    closes, a ``(thread, -nbytes)`` tuple when an array counted by
    ``profile_memory`` is released, and ``(_STOP, time)`` when recording stops.
    """

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.log = []
        self.in_kernel = False  # inside a built-in op's forward: its inner Tensor ops are not recorded
        self._built = (-1, None)  # (length of the log, its events): built once per state of the log
        self._t0_ns = _clock_ns()
        self.base_time_ns = time.time_ns()  # the wall clock at t0, for the Chrome trace

    # -- switching the engine's hooks -------------------------------------
    def start(self):
        global _current
        if _current is not None:
            raise RuntimeError("Can't profile: a profiler is already enabled on this thread.")
        _current = self
        _function.apply_interceptors.register(record_op, _LEVEL)
        _function.apply_interceptors.register(record_kernel, _KERNEL_LEVEL)
        _function.inplace_interceptors.register(record_inplace, _LEVEL)
        _function.composite_interceptors.register(record_composite, _LEVEL)
        _engine.node_interceptors.register(record_node, _LEVEL)

    def stop(self):
        global _current
        if _current is self:
            _function.apply_interceptors.unregister(record_op)
            _function.apply_interceptors.unregister(record_kernel)
            _function.inplace_interceptors.unregister(record_inplace)
            _function.composite_interceptors.unregister(record_composite)
            _engine.node_interceptors.unregister(record_node)
            _current = None
        self.log.append((_STOP, _clock_ns()))  # closes what an exception left open

    # -- records --------------------------------------------------------------
    def begin(self, name, cat="cpu_op", args=(), sequence_nr=-1, trace_name=None):
        """Open a record; it closes with :meth:`end`.  ``args`` give the input shapes;
        ``trace_name`` is the Chrome trace's name when it differs (``ProfilerStep#3``)."""
        shapes = [_shape(a) for a in args] if self.record_shapes else None
        frames = _python_stack() if self.with_stack else None
        thread = getattr(_this_thread, "id", None) or _thread_id()
        record = [name, cat, thread, 0, 0, shapes, sequence_nr, frames, 0, trace_name]
        record[START] = record[END] = _clock_ns()  # last, so that the bookkeeping above is not timed
        self.log.append(record)
        return record

    def end(self, record):
        record[END] = _clock_ns()
        self.log.append(record)

    def event_list(self):
        """The events in order of start, as an :class:`EventList`."""
        length, events = self._built
        if length != len(self.log):
            events = _replay(self.log, self._t0_ns)
            self._built = (len(self.log), events)
        return EventList(sorted(events, key=lambda e: (e.start_us, e.id)), profile_memory=self.profile_memory)

    # -- memory ---------------------------------------------------------------
    def count_allocations(self, record, outputs, args):
        """Charge ``record`` with the arrays its op returned that own new memory, and
        arrange for their release to be charged to the event open at that moment."""
        for out in outputs if isinstance(outputs, tuple) else (outputs,):
            data = getattr(out, "_data", None)
            if data is None or getattr(data, "base", 0) is not None or any(
                    getattr(a, "_data", None) is data for a in args):
                continue  # not a tensor, a view, or an input returned in place
            record[MEMORY] += data.nbytes
            try:
                weakref.finalize(data, _freed, self, data.nbytes)
            except TypeError:  # an array type without weak references
                pass


def _thread_id():
    """This thread's system id (PyTorch's ``tid``); a system call, so kept per thread."""
    _this_thread.id = threading.get_native_id()
    return _this_thread.id


def _freed(recorder, nbytes):
    """An array counted by ``count_allocations`` was released: a negative record."""
    if recorder is _current:
        recorder.log.append((getattr(_this_thread, "id", None) or _thread_id(), -nbytes))


def _replay(log, t0_ns):
    """Build the :class:`FunctionEvent` of each record by replaying the log.

    Per thread, a stack of the open events: a record seen for the first time
    opens an event, the child of the innermost open one; seen again, it closes
    (with anything left open inside it); a release is charged to the innermost
    open event; the stop entry ends every open event at the stop time.
    """
    events = {}  # id(record) -> its event
    stacks = {}  # thread -> the open events, innermost last
    for entry in log:
        if type(entry) is tuple:
            key, value = entry
            if key == _STOP:
                for stack in stacks.values():
                    for event in stack:
                        event._end_ns = value
                    stack.clear()
            else:
                stack = stacks.get(key)
                if stack:
                    stack[-1].own_memory += value
            continue
        event = events.get(id(entry))
        stack = stacks.setdefault(entry[THREAD], [])
        if event is None:
            events[id(entry)] = event = _open(entry, len(events), t0_ns)
            if stack:
                event.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(event)
            stack.append(event)
        else:
            event._end_ns = entry[END]
            while stack:  # pops ``event`` (and anything left open inside it)
                if stack.pop() is event:
                    break
    return list(events.values())


def _open(record, number, t0_ns):
    """A record's event, before its children, its end and its releases are known."""
    event = FunctionEvent(number, record[NAME], record[THREAD], record[START], t0_ns, record[CAT],
                          record[SHAPES], record[SEQUENCE_NR], record[STACK])
    event.own_memory = record[MEMORY]
    event.trace_name = record[TRACE_NAME]
    return event


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


# -- the two interceptors ------------------------------------------------------------


def record_op(proceed, cls, args, kwargs):
    """Around ``Function.apply`` while recording: the op as one record, named as PyTorch names it."""
    recorder = _current
    if recorder.in_kernel:  # used inside another op's kernel: not an ATen call of its own
        return proceed(cls, args, kwargs)
    record = recorder.begin(_names.op_name(cls, args), "cpu_op", args)
    try:
        outputs = proceed(cls, args, kwargs)
        first = outputs[0] if type(outputs) is tuple and outputs else outputs
        node = getattr(first, "grad_fn", None)
        if node is not None and node._forward_cls is cls:  # PyTorch links an op to its node by this number
            record[SEQUENCE_NR] = node._sequence_nr
        if recorder.profile_memory:
            recorder.count_allocations(record, outputs, args)
        return outputs
    finally:
        recorder.end(record)


def record_composite(proceed, name, args, kwargs):
    """Around an op written as other ops (``composite_op``): ``aten::<name>``, the ops it calls
    beneath it, as PyTorch records ``aten::cross_entropy_loss`` above ``aten::log_softmax``."""
    recorder = _current
    if recorder.in_kernel:
        return proceed(name, args, kwargs)
    record = recorder.begin("aten::" + name, "cpu_op", args)
    try:
        return proceed(name, args, kwargs)
    finally:
        recorder.end(record)


def record_inplace(proceed, tensor, cls, args):
    """Around an in-place op while recording: one record, PyTorch's name for it (``aten::add_``,
    ``aten::relu_`` above ``aten::clamp_min_``), linked to the node it makes; the out-of-place
    op edutorch computes it with, and the write, are its kernel."""
    recorder = _current
    if recorder.in_kernel:  # (an in-place op on a view rewrites its base in place: one op)
        return proceed(tensor, cls, args)
    name = _names.inplace_name(cls, args)
    record = recorder.begin(name, "cpu_op", (tensor, *args))
    opened = _open_calls(recorder, name, args)
    recorder.in_kernel = True
    try:
        out = proceed(tensor, cls, args)
        node = tensor.grad_fn
        if node is not None and node._forward_cls is cls:
            record[SEQUENCE_NR] = node._sequence_nr
        return out
    finally:
        recorder.in_kernel = False
        for opened_record in reversed(opened):
            recorder.end(opened_record)
        recorder.end(record)


def record_kernel(proceed, cls, args, kwargs):
    """Innermost around ``Function.apply``: a built-in op's forward, beneath the ATen ops PyTorch's
    implementation calls (``_names.CALLS``: ``aten::linear`` opens ``aten::t``, then runs
    in ``aten::addmm``); nothing the forward does inside is recorded."""
    recorder = _current
    if recorder.in_kernel or not _names.is_aten(_names.op_name(cls, args)):
        return proceed(cls, args, kwargs)  # a custom Function: the ops of its forward are recorded
    opened = _open_calls(recorder, _names.op_name(cls, args), args)
    recorder.in_kernel = True
    try:
        return proceed(cls, args, kwargs)
    finally:
        recorder.in_kernel = False
        for record in reversed(opened):
            recorder.end(record)


def _open_calls(recorder, name, args):
    """Open the records of the calls beneath ``name``: each view call opened and closed at
    once (with its own calls), the last call left open for the work, and so on down.
    Returns the records left open, outermost first."""
    opened = []
    calls = _names.CALLS.get(name, ())
    while calls:
        for view in calls[:-1]:
            _instant(recorder, view)
        opened.append(recorder.begin(calls[-1], "cpu_op", args))
        calls = _names.CALLS.get(calls[-1], ())
    return opened


def _instant(recorder, name):
    """A call that does no work here (a view PyTorch makes on its way): a record and its own calls."""
    record = recorder.begin(name, "cpu_op")
    for call in _names.CALLS.get(name, ()):
        _instant(recorder, call)
    recorder.end(record)


def record_node(proceed, node, grads):
    """Around the engine's step for one node while recording: PyTorch's two nested records,
    ``autograd::engine::evaluate_function: <node>`` around ``<node>`` around its backward."""
    recorder = _current
    name = _names.node_name(node)
    sequence_nr = getattr(node, "_sequence_nr", -1)
    sequence_nr = sequence_nr if sequence_nr < 2**62 else -1  # AccumulateGrad has none
    outer = recorder.begin("autograd::engine::evaluate_function: " + name, "cpu_op", (), sequence_nr)
    try:
        inner = recorder.begin(name, "cpu_op", grads, sequence_nr)
        try:
            grad_inputs = _run_node(recorder, proceed, node, grads, _names.NODE_KERNELS.get(name))
            if recorder.profile_memory:
                recorder.count_allocations(inner, tuple(grad_inputs), grads)
            return grad_inputs
        finally:
            recorder.end(inner)
    finally:
        recorder.end(outer)


def _run_node(recorder, proceed, node, grads, kernel):
    """The node's formula; inside ``kernel``'s record, and unrecorded inside, where PyTorch's
    node calls one kernel for it (``aten::convolution_backward``)."""
    if kernel is None or recorder.in_kernel:
        return proceed(node, grads)
    record = recorder.begin(kernel, "cpu_op", grads)
    recorder.in_kernel = True
    try:
        return proceed(node, grads)
    finally:
        recorder.in_kernel = False
        recorder.end(record)


class record_function:
    """Label a block of code in the profile (``torch.profiler.record_function``).

    As a context manager (``with record_function("forward"): ...``) or a
    decorator; the block becomes an event of that name, and every op inside it
    its child.  Costs nothing when no profiler records.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._record = None
        self._recorder = None

    def __enter__(self):
        recorder = _current
        if recorder is not None:
            self._recorder = recorder
            self._record = recorder.begin(self.name, "user_annotation")
        return self

    def __exit__(self, *exc_info):
        if self._record is not None:
            self._recorder.end(self._record)
            self._record = self._recorder = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper
