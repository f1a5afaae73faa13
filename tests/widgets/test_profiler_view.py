"""ProfilerView: a bar chart of key_averages(), on edutorch's profiler and on PyTorch's."""
import re

import pytest

import edutorch as et
from widget_helpers import is_png, mlp
from widgets import ProfilerSummary, ProfilerView
from widgets.profiler_summary import SORT_KEYS, ProfileRow, format_value
from widgets.profiler_view import COLOURS, bars_html


def _profile(T, memory=False):
    T.manual_seed(0)
    model = mlp(T.nn)
    x, y = T.randn(8, 20), T.randint(0, 4, (8,))
    with T.profiler.profile(profile_memory=memory) as prof:
        for _ in range(2):
            with T.profiler.record_function("train_step"):
                T.nn.functional.cross_entropy(model(x), y).backward()
    return prof


def test_summary_ranks_rows_by_every_key():
    summary = ProfilerSummary(_profile(et, memory=True))
    for key in SORT_KEYS:
        rows = summary.top(key, 5)
        assert len(rows) == 5
        assert [r.value for r in rows] == sorted((r.value for r in rows), reverse=True)
        best = max(summary.rows, key=lambda r: getattr(r, key))
        assert rows[0].value == getattr(best, key)
    counts = {r.name: r.count for r in summary.top("count", len(summary))}
    assert counts["aten::linear"] == 6 and counts["train_step"] == 2
    time_rows = summary.top("self_cpu_time_total", len(summary))
    assert sum(r.share for r in time_rows) == pytest.approx(1.0)


def test_summary_kinds_labels_and_errors():
    summary = ProfilerSummary(_profile(et).key_averages())  # an EventList works too
    kinds = {r.name: r.kind for r in summary.top("count", len(summary))}
    assert kinds["aten::linear"] == "forward op"
    assert kinds["AddmmBackward0"] == "backward node"
    assert kinds["autograd::engine::evaluate_function: AddmmBackward0"] == "backward node"
    assert kinds["train_step"] == "record_function"
    row = next(r for r in summary.top("count", len(summary)) if r.name.startswith("autograd::"))
    assert row.label.startswith("evaluate_function: ")
    with pytest.raises(ValueError, match="sort_by must be one of"):
        summary.top("wall_time")
    with pytest.raises(ValueError, match="row_limit must be at least 1"):
        summary.top("count", 0)
    with pytest.raises(ValueError, match="no events"):
        ProfilerSummary([])
    assert format_value(1500.0, "time") == "1.5 ms" and format_value(2048, "bytes") == "2 KB"
    assert format_value(1, "count") == "1 call"


def bar_widths(chart_html):
    """The bars' widths (percent of the chart's width) in ``bars_html``'s HTML."""
    return [float(w) for w in re.findall(r"left:[-\d.]+%; width:([\d.]+)%", chart_html)]


def test_view_dropdown_and_slider_redraw():
    view = ProfilerView(_profile(et, memory=True), row_limit=6)
    assert repr(view).startswith("ProfilerView(") and is_png(view.fallback_png()[0])
    assert len(view.rows) == 6 and "Self CPU time total" in view.table.value
    assert len(bar_widths(view.chart.value)) == 6
    first = view.chart.value
    view.sort_by.value = "count"
    assert view.rows[0].count == max(r.count for r in view.model.rows)  # (aten::t: one per linear and per backward)
    assert view.chart.value != first and "number of calls" in view.chart.value
    view.row_limit.value = 3
    assert len(view.rows) == 3 and view.table.value.count("\n") < 20
    assert len(bar_widths(view.chart.value)) == 3
    view.sort_by.value = "self_cpu_memory_usage"
    assert view.rows[0].value == max(r.self_cpu_memory_usage for r in view.model.rows)
    assert view.row_limit.max == len(view.model)


def test_bars_are_drawn_to_scale_with_their_values_and_kinds():
    """The widest value fills the bar's width; the others in proportion; one colour per kind,
    a legend of the kinds present; negative values (memory freed) left of a zero line."""
    rows = [ProfileRow("a", "forward op", 300.0, 1, 0), ProfileRow("b", "backward node", 100.0, 1, 0)]
    chart = bars_html(rows, "self CPU time (µs)", "time", "")
    assert bar_widths(chart) == [100.0, pytest.approx(33.33, abs=0.01)]
    assert COLOURS["forward op"] in chart and "backward node" in chart and "record_function" not in chart
    assert "300 µs" in chart and "self CPU time (µs)" in chart
    freed = bars_html([ProfileRow("a", "forward op", 300.0, 1, 0),
                       ProfileRow("b", "forward op", -100.0, 1, 0)], "memory", "bytes", "")
    lefts = [float(x) for x in re.findall(r"left:([-\d.]+)%", freed)]
    assert lefts == [25.0, 0.0] and bar_widths(freed) == [75.0, 25.0]


def test_view_on_real_torch(real_torch):
    import torch.profiler  # noqa: F401  (torch.profiler is a submodule)

    view = ProfilerView(_profile(real_torch), row_limit=5)
    names = [r.name for r in view.model.top("count", len(view.model))]
    assert "aten::linear" in names and "train_step" in names
    view.sort_by.value = "cpu_time_total"
    assert view.rows[0].name == "train_step" and "train_step" in view.chart.value


def test_long_names_are_never_cut_off_on_the_left():
    """The stored chart's left margin is the widest name as drawn (e.g. an AccumulateGrad node)."""
    view = ProfilerView(_profile(et), sort_by="count", row_limit=10)
    view.fallback_png()
    figure = view.canvas.figure
    renderer = figure.canvas.get_renderer()
    (ax,) = figure.axes
    labels = ax.get_yticklabels()
    assert any("AccumulateGrad" in label.get_text() for label in labels)
    assert min(label.get_window_extent(renderer).x0 for label in labels) >= 0


def test_a_control_sends_html_never_a_picture():
    """The dropdown and the slider change the HTML chart only: no figure is drawn for them
    (the stored picture is drawn when the notebook stores the output)."""
    view = ProfilerView(_profile(et), sort_by="count", row_limit=6)
    view.sort_by.value = "cpu_time_total"
    view.row_limit.value = 4
    assert view.canvas is None
    fresh = ProfilerView(_profile(et), sort_by="cpu_time_total", row_limit=4)
    names = re.findall(r"<td style='text-align:right[^>]*>([^<]+)<", view.chart.value)
    assert names == [row.label for row in view.rows]
    assert len(bar_widths(view.chart.value)) == len(bar_widths(fresh.chart.value)) == 4
