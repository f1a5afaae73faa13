"""``torch.profiler.profile``: time every op and backward node of a block of code.

::

    with torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with torch.profiler.record_function("train_step"):
            loss = model(x).sum()
            loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")     # open in ui.perfetto.dev

In a training loop, a :func:`schedule` says which steps to record, and
``prof.step()`` marks the end of each step: steps are skipped (``NONE``), run
with the profiler warming up (``WARMUP``, not recorded) or recorded
(``RECORD``); the last recorded step of a cycle (``RECORD_AND_SAVE``) hands the
profile to ``on_trace_ready``.  Without a schedule everything is recorded.
"""
import enum
import os
import warnings

from ._recorder import Recorder
from .profiler_util import EventList


class ProfilerActivity(enum.Enum):
    """What to profile (``torch.profiler.ProfilerActivity``).  edutorch runs ops on the
    CPU through NumPy; CuPy's GPU kernels are timed as the CPU calls that launch them."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step, as a :func:`schedule` decides."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities this build can profile: the CPU."""
    return {ProfilerActivity.CPU}


def kineto_available():
    """PyTorch's profiling library (Kineto) is not used: edutorch records events itself."""
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step number (``torch.profiler.schedule``).

    Skip ``skip_first`` steps, then repeat cycles of ``wait`` idle steps,
    ``warmup`` warm-up steps and ``active`` recorded steps, the last of which is
    ``RECORD_AND_SAVE``; ``repeat`` cycles (0: until the profiler stops).
    ``skip_first_wait`` drops the first cycle's wait.
    """

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:  # start the first cycle at its warm-up
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    """Without a schedule: record every step."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each profile as ``<worker>.<ns>.pt.trace.json`` in ``dir_name``."""
    import gzip
    import shutil
    import socket
    import time

    def handler_fn(prof):
        nonlocal worker_name
        os.makedirs(dir_name, exist_ok=True)
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker_name}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:  # PyTorch's ``.pt.trace.json.gz``
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)

    return handler_fn


class _KinetoProfile:
    """The recording window and what can be read from it (``torch.profiler._KinetoProfile``)."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, acc_events=False):
        self.activities = set(activities) if activities is not None else supported_activities()
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.recorder = None
        self._events = []  # the recorders of the windows kept (several with acc_events)

    def prepare_trace(self):
        """Get ready to record: without ``acc_events``, forget the previous window."""
        if not self.acc_events:
            self._events = []
        self.recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack)

    def start_trace(self):
        if self.recorder is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.recorder.start()

    def stop_trace(self):
        if self.recorder is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.recorder.stop()
        self._events.append(self.recorder)

    def events(self):
        """Every recorded event (``FunctionEvent``), in order of start."""
        events = [e for recorder in self._events for e in recorder.event_list()]
        return EventList(events, profile_memory=self.profile_memory)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One row per op name (and input shapes / stack, if asked): an EventList with ``table()``."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Write the recorded events as a Chrome Trace Event JSON file (Perfetto, chrome://tracing)."""
        base = self._events[0].base_time_ns if self._events else 0
        self.events().export_chrome_trace(path, base_time_ns=base)


class profile(_KinetoProfile):
    """Profiler context manager (``torch.profiler.profile``).

    Args:
        activities: ``[ProfilerActivity.CPU]`` (the default: what is supported).
        schedule: a callable step -> :class:`ProfilerAction` (see :func:`schedule`).
        on_trace_ready: called with the profiler at each ``RECORD_AND_SAVE`` step's end.
        record_shapes: keep each op's input shapes (the "Input Shapes" column).
        profile_memory: count the bytes each op allocates and frees (the "CPU Mem" columns).
        with_stack: keep the Python stack of each op (``key_averages(group_by_stack_n=...)``).
        acc_events: keep the events of every cycle instead of only the last one.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 use_cuda=None, custom_trace_id_callback=None):
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
        if activities is not None and len(set(activities)) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events)
        self.schedule = schedule if schedule else _default_schedule_fn
        self.record_steps = bool(schedule)  # a "ProfilerStep#N" event around each step
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_record = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Mark the end of a training step: move to the schedule's action for the next one."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step()

    # -- the schedule's state machine (PyTorch's action_map) --------------------
    def _transit(self, previous, current):
        """Prepare, start, stop and hand over traces as PyTorch does between two actions."""
        A = ProfilerAction
        if previous == A.NONE and current in (A.WARMUP, A.RECORD, A.RECORD_AND_SAVE):
            self.prepare_trace()
        if previous == A.WARMUP and current in (A.NONE, None):
            if current is A.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
            self.start_trace()  # an empty window: started and stopped at once
            self.stop_trace()
            return
        if previous == A.RECORD and current in (A.NONE, A.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}", stacklevel=3)
            self.stop_trace()
            return
        if previous == A.RECORD_AND_SAVE or (previous == A.RECORD and current is None):
            self.stop_trace()
            self._trace_ready()
            if current in (A.WARMUP, A.RECORD, A.RECORD_AND_SAVE):
                self.prepare_trace()
        if current in (A.RECORD, A.RECORD_AND_SAVE) and previous in (None, A.NONE, A.WARMUP, A.RECORD_AND_SAVE):
            self.start_trace()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _open_step(self):
        if self.record_steps and self.recorder is not None and self.current_action in (
                ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._step_record = self.recorder.begin("ProfilerStep*", "user_annotation",
                                                   trace_name=f"ProfilerStep#{self.step_num}")

    def _close_step(self):
        if self._step_record is not None:
            self.recorder.end(self._step_record)
            self._step_record = None
