"""ProfilerView: a bar chart of key_averages(), on edutorch's profiler and on PyTorch's."""
import asyncio

import pytest

import edutorch as et
from widget_helpers import built_in_a_kernel, is_png, mlp
from widgets import ProfilerSummary, ProfilerView
from widgets.profiler_summary import SORT_KEYS, format_value


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


def test_view_dropdown_and_slider_redraw():
    view = ProfilerView(_profile(et, memory=True), row_limit=6)
    assert repr(view).startswith("ProfilerView(") and is_png(view.image.value)
    assert len(view.rows) == 6 and "Self CPU time total" in view.table.value
    first = bytes(view.image.value)
    view.sort_by.value = "count"
    assert view.rows[0].count == max(r.count for r in view.model.rows)  # (aten::t: one per linear and per backward)
    assert bytes(view.image.value) != first
    view.row_limit.value = 3
    assert len(view.rows) == 3 and view.table.value.count("\n") < 20
    view.sort_by.value = "self_cpu_memory_usage"
    assert view.rows[0].value == max(r.self_cpu_memory_usage for r in view.model.rows)
    assert view.row_limit.max == len(view.model)


def test_view_on_real_torch(real_torch):
    import torch.profiler  # noqa: F401  (torch.profiler is a submodule)

    view = ProfilerView(_profile(real_torch), row_limit=5)
    names = [r.name for r in view.model.top("count", len(view.model))]
    assert "aten::linear" in names and "train_step" in names
    view.sort_by.value = "cpu_time_total"
    assert view.rows[0].name == "train_step" and is_png(view.image.value)


def test_long_names_are_never_cut_off_on_the_left():
    """The chart's left margin is the widest name as drawn (e.g. an AccumulateGrad node)."""
    view = ProfilerView(_profile(et), sort_by="count", row_limit=10)
    figure = view.canvas.figure
    renderer = figure.canvas.get_renderer()
    (ax,) = figure.axes
    labels = ax.get_yticklabels()
    assert any("AccumulateGrad" in label.get_text() for label in labels)
    assert min(label.get_window_extent(renderer).x0 for label in labels) >= 0


def test_pictures_rendered_ahead_are_the_pictures_of_a_fresh_view():
    """In a kernel the view renders, in idle time, every sort key at the shown row limit (and
    one row more and fewer); a control asking for one gets exactly what a new view draws."""
    profile = _profile(et, memory=True)
    ahead = {(key, 6) for key in SORT_KEYS} | {("count", 5), ("count", 7)}
    view = asyncio.run(built_in_a_kernel(lambda: ProfilerView(profile, sort_by="count", row_limit=6),
                                         lambda view: ahead <= set(view.pictures)))
    view.sort_by.value = "cpu_time_total"
    fresh = ProfilerView(profile, sort_by="cpu_time_total", row_limit=6)
    assert bytes(view.image.value) == bytes(fresh.image.value)
    assert view.table.value == fresh.table.value and "white-space: pre" in view.table.value
    view.row_limit.value = 7
    assert len(view.rows) == 7 and ("count", 7) in view.pictures


def test_nothing_is_rendered_ahead_while_the_controls_are_being_used():
    """Rendering ahead waits for a second of quiet and each change starts the wait again:
    someone changing the sort key every 0.1 s only pays for the pictures they see."""
    profile = _profile(et)
    shown = ["cpu_time_total", "count", "cpu_time"]

    async def scenario():
        view = ProfilerView(profile, sort_by="self_cpu_time_total", row_limit=5)
        rendered = []
        render = view._render
        view._render = lambda *key: (rendered.append(key), render(*key))
        for key in shown:
            view.sort_by.value = key
            await asyncio.sleep(0.1)
        during = list(rendered)
        await built_in_a_kernel(lambda: view, lambda view: not view.ahead.pending)
        return during, rendered

    during, rendered = asyncio.run(scenario())
    assert during == [(key, 5) for key in shown]
    assert len(rendered) > len(during)  # then, in the quiet, the rest
