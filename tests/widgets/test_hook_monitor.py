"""HookRecorder (pure Python) and the HookMonitor view, driven headlessly."""
import warnings

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
from widgets import HookMonitor, HookRecorder
from widget_helpers import copy_weights, is_png, mlp, png_bytes

HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
FORWARD_THEN_BACKWARD = (
    [(str(i), kind) for i in range(5) for kind in ("forward_pre", "forward")]
    + [(str(i), kind) for i in reversed(range(5)) for kind in ("backward_pre", "backward")]
)


def one_pass(model, x):
    with warnings.catch_warnings():  # torch warns that the first layer's input needs no grad
        warnings.simplefilter("ignore", UserWarning)
        model(x).sum().backward()


def no_hooks_left(model):
    return all(len(getattr(m, d)) == 0 for _, m in model.named_modules() for d in HOOK_DICTS)


def test_default_watches_leaf_modules(small_mlp):
    with HookRecorder(small_mlp) as recorder:
        assert recorder.module_names == ["0", "1", "2", "3", "4"]
        assert len(recorder.handles) == 20


def test_events_of_one_pass_in_order(small_mlp):
    recorder = HookRecorder(small_mlp)
    one_pass(small_mlp, et.randn(6, 20))
    assert recorder.summary() == FORWARD_THEN_BACKWARD
    assert [e.index for e in recorder.events] == list(range(20))
    first, last = recorder.events[0], recorder.events[-1]
    assert (first.class_name, first.records("input")[0].shape) == ("Linear", (6, 20))
    forward = recorder.events[1]
    assert [t.label for t in forward.tensors] == ["input[0]", "output[0]"]
    assert forward.primary().shape == (6, 16)
    # backward of the first layer: its input needs no grad, so grad_input is (None,)
    assert last.records("grad_input")[0].shape is None
    assert last.primary().label == "grad_output[0]"
    assert recorder.events[10].records("grad_output")[0].stats.mean == pytest.approx(1.0)


def test_statistics_are_those_of_the_tensors(small_mlp):
    recorder = HookRecorder(small_mlp)
    x = et.randn(6, 20)
    out = small_mlp(x)
    record = recorder.events[-1].records("output")[0]
    values = out.detach().numpy().astype(np.float64)
    np.testing.assert_array_equal(record.values, out.detach().numpy())
    assert record.stats.mean == pytest.approx(values.mean())
    assert record.stats.std == pytest.approx(values.std(ddof=1))
    assert (record.stats.min, record.stats.max) == pytest.approx((values.min(), values.max()))
    assert record.stats.norm == pytest.approx(np.linalg.norm(values))


def test_recording_does_not_change_the_results(small_mlp):
    x = et.randn(6, 20)
    expected = small_mlp(x).detach().numpy()
    recorder = HookRecorder(small_mlp)
    np.testing.assert_array_equal(small_mlp(x).detach().numpy(), expected)
    recorder.detach()


def test_same_events_as_real_torch(small_mlp, real_torch):
    twin = copy_weights(real_torch, small_mlp, mlp(real_torch.nn))
    x = np.random.default_rng(0).standard_normal((6, 20)).astype(np.float32)
    ours, theirs = HookRecorder(small_mlp), HookRecorder(twin)
    one_pass(small_mlp, et.tensor(x))
    one_pass(twin, real_torch.tensor(x))
    assert ours.summary() == theirs.summary() == FORWARD_THEN_BACKWARD
    for a, b in zip(ours.events, theirs.events):
        assert [(t.label, t.shape, t.dtype) for t in a.tensors] == [
            (t.label, t.shape, t.dtype) for t in b.tensors]
        for ta, tb in zip(a.tensors, b.tensors):
            if ta.values is not None:
                np.testing.assert_allclose(ta.values, tb.values, rtol=1e-5, atol=1e-6)


def test_chosen_modules_by_name_or_object(small_mlp):
    recorder = HookRecorder(small_mlp, modules=["2", small_mlp[4]])
    assert recorder.module_names == ["2", "4"]
    one_pass(small_mlp, et.randn(3, 20))
    assert recorder.summary() == [("2", "forward_pre"), ("2", "forward"), ("4", "forward_pre"),
                                  ("4", "forward"), ("4", "backward_pre"), ("4", "backward"),
                                  ("2", "backward_pre"), ("2", "backward")]
    with pytest.raises(KeyError, match="no submodule named 'nope'"):
        HookRecorder(small_mlp, modules=["nope"])
    with pytest.raises(ValueError, match="not a submodule"):
        HookRecorder(small_mlp, modules=[nn.Linear(2, 2)])


def test_detach_removes_every_handle_and_clear_forgets(small_mlp):
    recorder = HookRecorder(small_mlp)
    assert not no_hooks_left(small_mlp)
    one_pass(small_mlp, et.randn(3, 20))
    recorder.clear()
    assert recorder.events == []
    recorder.detach()
    assert no_hooks_left(small_mlp) and recorder.handles == []
    small_mlp(et.randn(3, 20))
    assert recorder.events == []
    recorder.attach()  # and back again
    small_mlp(et.randn(3, 20))
    assert len(recorder.events) == 10
    recorder.detach()


def test_context_manager_detaches(small_mlp):
    with HookRecorder(small_mlp) as recorder:
        small_mlp(et.randn(3, 20))
    assert no_hooks_left(small_mlp) and len(recorder.events) == 10


def test_describe_names_module_hook_and_shapes(small_mlp):
    recorder = HookRecorder(small_mlp)
    one_pass(small_mlp, et.randn(3, 20))
    text = recorder.events[1].describe()
    assert text.startswith("#1 forward of '0' (Linear): forward hook")
    assert "input[0]: (3, 20) float32  mean=" in text and "output[0]: (3, 16)" in text
    assert "grad_input[0]: None" in recorder.events[-1].describe()


# -- the view ----------------------------------------------------------------------------
def test_view_steps_through_one_pass(small_mlp):
    monitor = HookMonitor(small_mlp)
    assert repr(monitor) == "HookMonitor(Sequential, 5 modules watched)"
    assert monitor.position.value.startswith("no events yet")
    loss = monitor.run(et.randn(4, 20))
    assert loss.shape == ()
    assert monitor.slider.max == 19 and monitor.slider.value == 0
    assert monitor.position.value == "event #0 (of #0–#19)"  # 0-based, like the slider
    assert "forward_pre of &#x27;0&#x27; (Linear)" in monitor.description.value
    first = png_bytes(monitor.image)
    assert is_png(first)
    monitor.next_button.click()
    assert monitor.slider.value == 1 and monitor.current().kind == "forward"
    assert png_bytes(monitor.image) != first
    monitor.prev_button.click()
    monitor.prev_button.click()  # stays at the first event
    assert monitor.slider.value == 0
    monitor.slider.value = 19
    monitor.next_button.click()  # stays at the last event
    assert monitor.slider.value == 19
    assert monitor.current().kind == "backward" and monitor.current().module_name == "0"
    assert "grad_input[0]: None" in monitor.description.value
    # the timeline lists every event and highlights the current one
    assert monitor.timeline.value.count("<div style=") == 1 + 20
    assert "background:#ffe8a3;'> 19" in monitor.timeline.value


def test_view_clear_detach_and_context_manager(small_mlp):
    with HookMonitor(small_mlp, modules=["0"]) as monitor:
        monitor.run(et.randn(4, 20))
        assert len(monitor.events) == 4
        monitor.clear_button.click()
        assert monitor.events == [] and monitor.slider.max == 0
        assert "hooks attached on 1 modules" in monitor.title.value
    assert no_hooks_left(small_mlp)
    assert "hooks detached" in monitor.title.value


def test_view_refresh_after_running_the_model_yourself(small_mlp):
    monitor = HookMonitor(small_mlp)
    small_mlp(et.randn(2, 20))
    assert monitor.slider.max == 0  # the view has not looked yet
    monitor.refresh()
    assert monitor.slider.max == 9
    monitor.detach()


def test_view_on_the_784_mlp_shows_every_event():
    et.manual_seed(0)
    model = mlp(nn, (784, 256, 128, 10))
    monitor = HookMonitor(model)
    monitor.run(et.randn(128, 784))
    pictures, captions = [], set()
    for i in range(len(monitor.events)):
        monitor.slider.value = i
        pictures.append(png_bytes(monitor.image))
        captions.add(monitor.caption.value)
    assert len(captions) == 20
    # the output of Linear '0' (event 1) IS the input of ReLU '1' (event 2): same picture
    assert pictures[1] == pictures[2] and pictures[0] != pictures[1]
    assert any("#1 forward '0'</b>: output[0] (128, 256)" in c for c in captions)
    monitor.detach()


def test_recording_stops_at_max_events(small_mlp):
    recorder = HookRecorder(small_mlp, max_events=12)
    for _ in range(2):
        one_pass(small_mlp, et.randn(3, 20))
    assert len(recorder.events) == 12 and recorder.dropped == 28
    assert recorder.summary()[:10] == FORWARD_THEN_BACKWARD[:10]
    recorder.clear()
    assert recorder.dropped == 0
    small_mlp(et.randn(3, 20))
    assert len(recorder.events) == 10
    recorder.detach()


def _monitor_after_one_run():
    et.manual_seed(0)
    monitor = HookMonitor(mlp(nn))
    x = et.tensor(np.random.default_rng(3).standard_normal((6, 20)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        monitor.run(x)
    return monitor


def test_an_event_rendered_ahead_is_shown_without_drawing(monkeypatch):
    """In a kernel, once the controls rest, the next event's picture is ready: "next ▶"
    shows it without drawing, byte for byte what a fresh monitor draws there, and
    "◀ prev" comes back to the first event's picture."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    view = asyncio.run(built_in_a_kernel(_monitor_after_one_run,
                                         lambda view: not view.ahead.pending))
    first = (bytes(view.image.value), view.caption.value)
    assert 1 in view.rendered

    def no_drawing(*args):
        raise AssertionError("drawn again")
    monkeypatch.setattr(view.canvas, "png", no_drawing)
    view.next_button.click()
    fresh = _monitor_after_one_run()
    fresh.slider.value = 1
    assert bytes(view.image.value) == bytes(fresh.image.value)
    assert view.caption.value == fresh.caption.value
    view.prev_button.click()
    assert (bytes(view.image.value), view.caption.value) == first


def test_a_kept_picture_is_not_shown_for_a_new_event_at_the_same_index():
    """After clear() and a new run, event 0 is another event: drawn anew, not the kept one."""
    monitor = _monitor_after_one_run()
    before = bytes(monitor.image.value)
    monitor.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        monitor.run(et.ones(6, 20) * 5)
    assert bytes(monitor.image.value) != before
    assert monitor.rendered[0][0] is monitor.events[0]
