"""What a profile holds: events, their averages per name, and the printed table.

Mirrors ``torch/autograd/profiler_util.py``:

* :class:`FunctionEvent` - one recorded interval (an op, a backward node, a
  ``record_function`` block) with its children, so "self" time is its own time
  minus its children's;
* :class:`FunctionEventAvg` - the events of one name (``key``) summed:
  what ``key_averages()`` returns, one row of the table;
* :class:`EventList` - a list of either, with ``table()`` printing PyTorch's
  layout and ``export_chrome_trace()`` writing the Chrome Trace Event JSON that
  Perfetto (ui.perfetto.dev) and ``chrome://tracing`` open.

Times are in microseconds, as in PyTorch; memory in bytes.
"""
import enum
import json
import os


class DeviceType(enum.Enum):
    """Where an event ran (``torch.profiler.DeviceType``); edutorch's events run on the CPU."""

    CPU = 0
    CUDA = 1


class FunctionEvent:
    """One recorded interval (``torch.autograd.profiler_util.FunctionEvent``)."""

    count = 1
    is_async = False
    node_id = -1
    device_type = DeviceType.CPU

    __slots__ = ("id", "name", "thread", "cat", "_input_shapes", "sequence_nr", "_stack", "cpu_parent",
                 "cpu_children", "own_memory", "_t0_ns", "_start_ns", "_end_ns", "trace_name")

    def __init__(self, id, name, thread, start_ns, t0_ns=0, cat="cpu_op", input_shapes=None,
                 sequence_nr=-1, stack=None):
        self.id = id
        self.name = name
        self.thread = thread
        self._t0_ns = t0_ns  # the profile's start: times are read as µs since then
        self._start_ns = self._end_ns = start_ns  # time.perf_counter_ns() readings
        self.cat = cat  # "cpu_op" or "user_annotation", the Chrome trace's category
        self._input_shapes = input_shapes
        self.sequence_nr = sequence_nr
        self._stack = stack
        self.cpu_parent = None
        self.cpu_children = []
        self.own_memory = 0  # bytes allocated (+) and freed (-) while this was the innermost event
        self.trace_name = None  # the Chrome trace's name when it differs ("ProfilerStep#3")

    @property
    def start_us(self):
        return (self._start_ns - self._t0_ns) / 1000.0

    @property
    def end_us(self):
        return (self._end_ns - self._t0_ns) / 1000.0

    @property
    def input_shapes(self):
        """Each argument's shape (``[]`` for a non-tensor); empty without ``record_shapes``."""
        return self._input_shapes if self._input_shapes is not None else []

    @property
    def stack(self):
        """The Python frames that called it, innermost first (``with_stack``)."""
        return self._stack if self._stack is not None else []

    @property
    def key(self):
        return self.name

    @property
    def is_user_annotation(self):
        return self.cat == "user_annotation"

    @property
    def cpu_time_total(self):
        """Wall time from start to end, children included (µs)."""
        return (self._end_ns - self._start_ns) / 1000.0

    @property
    def self_cpu_time_total(self):
        """``cpu_time_total`` minus the children's: the time spent in this event's own code."""
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    cpu_time = cpu_time_total  # one call: the average is the total

    @property
    def cpu_memory_usage(self):
        """Net bytes allocated during this event, children included."""
        return self.own_memory + sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.own_memory

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """The events of one key summed (``torch.autograd.profiler_util.FunctionEventAvg``)."""

    is_async = False
    node_id = -1
    device_type = DeviceType.CPU

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.cpu_parent = None
        self.is_user_annotation = False

    def add(self, event):
        """Sum ``event`` (a FunctionEvent or FunctionEventAvg) into this row."""
        if self.key is None:  # the first event gives the row its name and attributes
            self.key = event.key
            self.input_shapes = event.input_shapes
            self.stack = event.stack
            self.cpu_parent = event.cpu_parent
            self.is_user_annotation = event.is_user_annotation
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self):
        """Average time per call, children included (µs): PyTorch's "CPU time avg"."""
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events (``torch.autograd.profiler_util.EventList``)."""

    def __init__(self, *args, profile_memory=False, **kwargs):
        kwargs.pop("use_device", None)
        kwargs.pop("with_flops", None)
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self time: the profile's total (the table's footer)."""
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0):
        """One :class:`FunctionEventAvg` per name, in order of first appearance.

        ``group_by_input_shapes`` splits a name by its input shapes (needs
        ``record_shapes=True``); ``group_by_stack_n`` by the first n frames of its
        Python stack (needs ``with_stack=True``).
        """
        rows = {}
        for event in self:
            key = (event.key, event.is_user_annotation)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(event.stack[:group_by_stack_n])
            rows.setdefault(key, FunctionEventAvg()).add(event)
        averages = EventList(rows.values(), profile_memory=self._profile_memory)
        for row in averages:
            row.stack = row.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                row.input_shapes = ""
        return averages

    def total_average(self):
        """Every event summed into one row, keyed ``"Total"``."""
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
            total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch prints them, sorted by the attribute ``sort_by`` (largest first).

        ``sort_by`` names an attribute of the rows: ``"cpu_time_total"``,
        ``"self_cpu_time_total"``, ``"cpu_time"``, ``"cpu_memory_usage"``,
        ``"self_cpu_memory_usage"``, ``"count"``.
        """
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            profile_memory=self._profile_memory,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path, base_time_ns=0, pid=None):
        """Write the events as a Chrome Trace Event JSON file (see :func:`chrome_trace`)."""
        with open(path, "w") as f:
            json.dump(chrome_trace(self, base_time_ns, pid, trace_name=path), f)


def chrome_trace(events, base_time_ns=0, pid=None, trace_name=""):
    """The Chrome Trace Event format, as PyTorch (Kineto) writes it.

    ``traceEvents`` holds metadata events (``"ph": "M"``: process and thread
    names) and one complete event per interval (``"ph": "X"``, ``ts`` and
    ``dur`` in microseconds, ``pid``/``tid``): what Perfetto and
    ``chrome://tracing`` draw as nested bars.  ``ts`` counts from
    ``baseTimeNanoseconds`` (PyTorch's convention: the epoch, rounded).
    """
    pid = os.getpid() if pid is None else pid
    threads = sorted({event.thread for event in events})
    meta = [
        {"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "ts": 0, "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    for tid in threads:
        meta.append({"ph": "M", "name": "thread_name", "ts": 0, "pid": pid, "tid": tid,
                     "args": {"name": f"thread {tid} (python)"}})
    complete = []
    for event in events:
        args = {"External id": event.id, "Record function id": 0, "Ev Idx": event.id}
        if event.input_shapes:
            args["Input Dims"] = event.input_shapes
        if event.sequence_nr >= 0:
            args["Sequence number"] = event.sequence_nr
        complete.append({"ph": "X", "cat": event.cat, "name": event.trace_name or event.name, "pid": pid, "tid": event.thread,
                         "ts": round(event.start_us, 3), "dur": round(event.cpu_time_total, 3),
                         "args": args})
    return {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
            "baseTimeNanoseconds": base_time_ns, "traceEvents": meta + complete,
            "traceName": trace_name}


# -- the table ----------------------------------------------------------------


def _format_time(time_us):
    """``1.234ms``: PyTorch's time format (s, ms or us, three decimals)."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    """``120 B``, ``1.50 KB``, ...: PyTorch's memory format (powers of 1024)."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _override_time_unit(time_us, time_unit):
    if time_unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if time_unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if time_unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    """PyTorch's table: right-aligned columns two spaces apart, dashed rules, a footer.

    Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
    [CPU Mem, Self CPU Mem], # of Calls, [Input Shapes], [Source Location].
    Percentages are of the sum of self times (which covers the whole profile).
    """
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda event: getattr(event, sort_by), reverse=True)
    has_shapes = any(event.input_shapes for event in events)
    has_stack = any(event.stack for event in events)

    name_width = min(max(len(event.key) for event in events) + 4, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(min(max(len(str(event.input_shapes)) for event in events) + 4, max_shapes_column_width))
        aligns.append(">")
    if has_stack:
        headers.append("Source Location")
        widths.append(min(max(len(line) for event in events for line in event.stack) + 4,
                          max_src_column_width))
        aligns.append("<")
    row_format = "".join("{: " + align + str(width) + "}  " for align, width in zip(aligns, widths))
    rule = "".join("-" * width + "  " for width in widths)
    line_length = sum(width + 2 for width in widths) - 2

    total_us = sum(event.self_cpu_time_total for event in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [rule, row_format.format(*headers), rule]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [
            name,
            _format_time_share(event.self_cpu_time_total, total_us),
            _override_time_unit(event.self_cpu_time_total, time_unit),
            _format_time_share(event.cpu_time_total, total_us),
            _override_time_unit(event.cpu_time_total, time_unit),
            _override_time_unit(event.cpu_time, time_unit),
        ]
        if profile_memory:
            row += [_format_memory(event.cpu_memory_usage), _format_memory(event.self_cpu_memory_usage)]
        row.append(event.count)
        if has_shapes:
            row.append(str(event.input_shapes)[:widths[len(row)]])
        if has_stack:
            row.append(_trim_path(event.stack[0], widths[-1]) if event.stack else "")
        lines.append(row_format.format(*row))
        if has_stack:  # the remaining frames, one per line, then a blank row
            blanks = [""] * (len(headers) - 1)
            for frame in event.stack[1:]:
                lines.append(row_format.format(*blanks, _trim_path(frame, widths[-1])))
            lines.append(row_format.format(*blanks, ""))
    lines += [rule, f"Self CPU time total: {_override_time_unit(total_us, time_unit)}"]
    return "".join(line + "\n" for line in lines)


def _trim_path(path, width):
    """Keep the end of a long source path, marked with "..."."""
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path
