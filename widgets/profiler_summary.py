"""The model of ``ProfilerView``: the rows of ``prof.key_averages()``, ranked.

``key_averages()`` returns one row per event name with its call count, self
and total CPU time (µs) and memory (bytes); PyTorch's and edutorch's rows
have the same attributes, so this model works on either profiler.  It ranks
the rows by a chosen key, keeps the top N, and says what kind of event each
row is (a forward op, a backward node, a ``record_function`` block), which the
view colours.  No ipywidgets, no matplotlib.
"""
from __future__ import annotations

from dataclasses import dataclass

#: sort keys of ``EventList.table(sort_by=...)``, with a label and the unit of the value
SORT_KEYS = {
    "self_cpu_time_total": ("self CPU time", "time"),
    "cpu_time_total": ("CPU time, children included", "time"),
    "cpu_time": ("CPU time per call", "time"),
    "count": ("number of calls", "count"),
    "cpu_memory_usage": ("CPU memory, children included", "bytes"),
    "self_cpu_memory_usage": ("self CPU memory", "bytes"),
}
EVALUATE = "autograd::engine::evaluate_function: "
KINDS = ("forward op", "backward node", "record_function")


@dataclass(frozen=True)
class ProfileRow:
    """One name of ``key_averages()``: what the bar chart shows for it."""

    name: str
    kind: str     # one of KINDS
    value: float  # the sort key's value: µs, calls or bytes
    count: int
    share: float  # of the profile's total self CPU time (0..1); for time keys only

    @property
    def label(self):
        """The name as the chart shows it: the engine's long prefix shortened."""
        if self.name.startswith(EVALUATE):
            return "evaluate_function: " + self.name[len(EVALUATE):]
        return self.name


def kind_of(row):
    """Is this row a forward op, a backward node or a block of the user's (``record_function``)?"""
    name = row.key
    if getattr(row, "is_user_annotation", False) or name.startswith("ProfilerStep"):
        return "record_function"
    if name.startswith("autograd::") or "Backward" in name or name.endswith("AccumulateGrad"):
        return "backward node"
    return "forward op"


class ProfilerSummary:
    """The rows of a profile, ranked by any of ``SORT_KEYS``.

    >>> summary = ProfilerSummary(prof)          # a finished torch/edutorch profiler
    >>> summary.top("self_cpu_time_total", 5)    # the five ops that took the most time
    """

    def __init__(self, profile_or_rows):
        rows = profile_or_rows.key_averages() if hasattr(profile_or_rows, "key_averages") else profile_or_rows
        self.averages = rows  # kept for its .table(): PyTorch's own printout
        self.rows = list(rows)
        if not self.rows:
            raise ValueError("the profile has no events: run some ops inside the profiler's block")
        self.total_self_time = sum(r.self_cpu_time_total for r in self.rows)

    def top(self, sort_by="self_cpu_time_total", row_limit=10):
        """The ``row_limit`` rows with the largest ``sort_by``, largest first."""
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(SORT_KEYS)}, got {sort_by!r}")
        if row_limit < 1:
            raise ValueError(f"row_limit must be at least 1, got {row_limit}")
        ranked = sorted(self.rows, key=lambda r: getattr(r, sort_by), reverse=True)[:row_limit]
        total = self.total_self_time
        return [
            ProfileRow(name=r.key, kind=kind_of(r), value=float(getattr(r, sort_by)), count=int(r.count),
                       share=getattr(r, sort_by) / total if total and SORT_KEYS[sort_by][1] == "time" else 0.0)
            for r in ranked
        ]

    def table(self, sort_by="self_cpu_time_total", row_limit=10):
        """PyTorch's text table for the same choice (``key_averages().table``)."""
        return self.averages.table(sort_by=sort_by, row_limit=row_limit)

    def __len__(self):
        return len(self.rows)


def format_value(value, unit):
    """A value as the chart's labels write it: ``1.234 ms``, ``12 calls``, ``1.5 KB``."""
    if unit == "time":
        for scale, name in ((1e6, "s"), (1e3, "ms")):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value:.3g} µs"
    if unit == "bytes":
        for scale, name in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{int(value)} B"
    return f"{int(value)} call" + ("" if int(value) == 1 else "s")
