"""``torch.autograd.profiler``: the older spelling of the profiler.

``torch.autograd.profiler.profile`` is the profiler's first interface (no
schedule, ``enabled=`` to switch it off, ``function_events`` after the block);
``record_function`` is the same class as ``torch.profiler.record_function``.
The recording itself lives in ``edutorch/profiler/``.
"""
from ..profiler._recorder import Recorder, record_function
from ..profiler.profiler_util import EventList, FunctionEvent, FunctionEventAvg


class profile:
    """Context manager that records ops and backward nodes (``torch.autograd.profiler.profile``).

    ``prof.function_events`` (an :class:`EventList`) holds the events once the
    block has ended; ``prof.key_averages()``, ``prof.table()`` and
    ``prof.export_chrome_trace(path)`` read them.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._recorder = None
        self.function_events = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self._recorder is not None:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        self._recorder.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        self._recorder.stop()
        self.function_events = self._recorder.event_list()
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return self._events().table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                    max_shapes_column_width, header, top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path):
        self._events().export_chrome_trace(path, base_time_ns=self._recorder.base_time_ns)

    def __str__(self):
        return self.table()


__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]
