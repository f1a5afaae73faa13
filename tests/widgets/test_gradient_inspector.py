"""GradientInspectorModel (pure Python) and the GradientInspector view, driven headlessly."""
import copy

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
from test_layering import WIDGETS, imported_top_level_names
from widgets import GradientInspector, GradientInspectorModel, set_text_scale
from widgets.gradient_inspector import LOG_EDGES
from widgets.gradient_inspector_view import _position
from widget_helpers import copy_weights, is_png, mlp, png_bytes


def deep_mlp(nn_module, activation, depth=8, width=32):
    """``depth`` hidden Linear+activation layers: where gradients vanish (or not)."""
    layers, size = [], 16
    for _ in range(depth):
        layers += [nn_module.Linear(size, width), getattr(nn_module, activation)()]
        size = width
    return nn_module.Sequential(*layers, nn_module.Linear(size, 4))


def batch(framework, n=64, features=16, classes=4, seed=0):
    rng = np.random.default_rng(seed)
    return (framework.tensor(rng.standard_normal((n, features)).astype(np.float32)),
            framework.tensor(rng.integers(0, classes, size=n)))


def grads_of(model):
    return {n: p.grad.detach().numpy().copy() for n, p in model.named_parameters()}


def test_the_model_file_imports_no_gui_library():
    names = imported_top_level_names(WIDGETS / "gradient_inspector.py")
    assert not names & {"ipywidgets", "matplotlib", "IPython", "PIL", "edutorch", "torch"}
    # the view too takes the framework from the module it is given
    assert not imported_top_level_names(WIDGETS / "gradient_inspector_view.py") & {
        "edutorch", "torch"}


def test_rows_summarise_each_parameters_grad(small_mlp, eval_batch):
    model = GradientInspectorModel(small_mlp, eval_batch)
    assert [r.name for r in model.rows] == [n for n, _ in small_mlp.named_parameters()]
    expected = nn.functional.cross_entropy(small_mlp(eval_batch[0]), eval_batch[1])
    assert model.loss == pytest.approx(float(expected))
    for row in model.rows:
        grad = dict(small_mlp.named_parameters())[row.name].grad.detach().numpy()
        assert row.shape == grad.shape
        assert row.stats.norm == pytest.approx(np.linalg.norm(grad.astype(np.float64)))
        assert row.stats.mean == pytest.approx(grad.mean(dtype=np.float64))
        assert row.stats.std == pytest.approx(grad.std(ddof=1, dtype=np.float64))
        assert row.abs_max == pytest.approx(np.abs(grad).max())
        assert row.log_counts.sum() == np.count_nonzero(grad)  # exact zeros are not binned
        biggest = int(np.digitize(np.log10(np.abs(grad).max()), LOG_EDGES)) - 1
        assert row.log_counts[biggest] > 0 and row.log_counts[biggest + 1:].sum() == 0
        np.testing.assert_array_equal(model.grad(row.name), grad)
    with pytest.raises(KeyError, match="no gradient for 'nope'"):
        model.row("nope")


@pytest.mark.parametrize("framework_name", ["edutorch", "torch"])
def test_deep_sigmoid_tanh_and_relu_nets_look_different(framework_name):
    """Sigmoid's gradient vanishes towards the input (σ' ≤ 1/4 per layer); tanh and ReLU keep
    it within a few decades; only ReLU gives exact zeros (units that were off)."""
    framework = et if framework_name == "edutorch" else pytest.importorskip(
        "torch", reason="PyTorch not installed: torch half skipped")
    data = batch(framework)
    first_over_last, zeros = {}, {}
    for activation in ("Sigmoid", "Tanh", "ReLU"):
        framework.manual_seed(0)
        model = GradientInspectorModel(deep_mlp(framework.nn, activation), data)
        weights = [r for r in model.rows if r.name.endswith("weight")]
        first_over_last[activation] = weights[0].stats.norm / weights[-1].stats.norm
        zeros[activation] = max(r.stats.zeros for r in weights[:-1])
    assert first_over_last["Sigmoid"] < 1e-5
    assert first_over_last["Tanh"] > 1e-3 and first_over_last["ReLU"] > 1e-3
    assert first_over_last["Sigmoid"] < 1e-3 * min(first_over_last["Tanh"],
                                                   first_over_last["ReLU"])
    assert zeros["Sigmoid"] == zeros["Tanh"] == 0.0 and zeros["ReLU"] > 0.0


@pytest.mark.parametrize("max_norm", [1e-3, 0.05, 1e3])
def test_clip_norm_shows_exactly_what_clip_grad_norm_does(small_mlp, eval_batch, max_norm):
    model = GradientInspectorModel(small_mlp, eval_batch)
    before = grads_of(small_mlp)
    twin = copy.deepcopy(small_mlp)
    for p, q in zip(small_mlp.parameters(), twin.parameters()):
        q.grad = p.grad.clone()
    result = model.clip_norm(max_norm)
    returned = nn.utils.clip_grad_norm_(twin.parameters(), max_norm)
    assert result.kind == "norm" and result.threshold == max_norm
    assert result.total_norm == float(returned)  # bit for bit, not approximately
    coef = max_norm / (returned + 1e-6)
    assert result.clip_coef == float(coef)
    assert result.clip_coef_clamped == float(coef.clamp(max=1.0)) == min(float(coef), 1.0)
    # each clipped gradient is the gradient times the factor: its norm is the norm times it
    # (computed so, from the cached norms; equal up to float32 rounding of the scaled entries)
    for name, q in twin.named_parameters():
        assert result.after[name] == pytest.approx(float(q.grad.norm()), rel=1e-6)
        assert result.before[name] == float(dict(small_mlp.named_parameters())[name].grad.norm())
    assert result.total_after == pytest.approx(
        float(nn.utils.get_total_norm([q.grad for q in twin.parameters()])), rel=1e-6)
    if max_norm >= float(returned):
        assert result.after == result.before and result.clip_coef_clamped == 1.0
    else:
        assert result.total_after == pytest.approx(max_norm, rel=1e-4)
    for name, grad in grads_of(small_mlp).items():  # the real gradients are untouched
        np.testing.assert_array_equal(grad, before[name])


def test_clip_value_shows_exactly_what_clip_grad_value_does(small_mlp, eval_batch):
    model = GradientInspectorModel(small_mlp, eval_batch)
    before = grads_of(small_mlp)
    clip = 0.3 * min(r.abs_max for r in model.rows)
    result = model.clip_value(clip)
    nn.utils.clip_grad_value_(small_mlp.parameters(), clip)
    for name, p in small_mlp.named_parameters():
        assert result.after[name] == pytest.approx(float(p.grad.norm()), rel=1e-6)
        assert result.clamped[name] == pytest.approx(np.mean(np.abs(before[name]) > clip))
        assert result.clamped[name] > 0
    assert result.total_norm == pytest.approx(
        np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in before.values())), rel=1e-6)


def test_a_clip_value_preview_is_remembered_until_the_next_gradients(small_mlp, eval_batch):
    model = GradientInspectorModel(small_mlp, eval_batch, lr=0.5)
    first = model.clip_value(0.01)
    model.clip_norm(0.5)  # the max_norm slider moved: the clip_value preview stays
    assert model.clip_value(0.01) is first and model.clip_value(0.02) is not first
    model.step()  # new gradients: computed again, from them
    again = model.clip_value(0.01)
    assert again is not first
    grads = grads_of(small_mlp)
    for name, g in grads.items():
        clamped = np.clip(g.astype(np.float64), -0.01, 0.01)
        assert again.after[name] == pytest.approx(np.linalg.norm(clamped), rel=1e-6)


def test_steps_train_and_build_the_timeline(small_mlp, eval_batch):
    model = GradientInspectorModel(small_mlp, eval_batch, lr=0.5)
    weight = small_mlp[0].weight
    start, grad = weight.detach().numpy().copy(), weight.grad.detach().numpy().copy()
    model.step()
    np.testing.assert_allclose(weight.detach().numpy(), start - 0.5 * grad, rtol=1e-6, atol=1e-7)
    model.step(3)
    assert model.steps == 4 and [r.step for r in model.history] == [0, 1, 2, 3, 4]
    losses = [r.loss for r in model.history]
    assert losses[-1] < losses[0]  # full-batch descent on one batch
    steps, total = model.timeline()
    np.testing.assert_array_equal(steps, [0, 1, 2, 3, 4])
    assert total[-1] == pytest.approx(np.sqrt(sum(r.stats.norm ** 2 for r in model.rows)))
    assert model.timeline("0.weight")[1][-1] == pytest.approx(model.row("0.weight").stats.norm,
                                                              rel=1e-6)
    with pytest.raises(ValueError, match="clip_mode must be one of"):
        model.step(clip_mode="clip")


def test_clipping_while_training_clips_the_real_gradients(small_mlp, eval_batch):
    model = GradientInspectorModel(small_mlp, eval_batch, lr=1.0)
    start = [p.detach().numpy().copy() for p in small_mlp.parameters()]
    total = model.history[-1].total_norm
    model.step(clip_mode="norm", max_norm=total / 10)
    moved = np.sqrt(sum(((p.detach().numpy() - s).astype(np.float64) ** 2).sum()
                        for p, s in zip(small_mlp.parameters(), start)))
    assert moved == pytest.approx(total / 10, rel=1e-4)  # lr 1: the update is the clipped grad
    assert model.history[0].clip == "norm" and model.history[1].clip == "none"
    start = [p.detach().numpy().copy() for p in small_mlp.parameters()]
    model.step(clip_mode="value", clip_value=1e-4)
    for p, s in zip(small_mlp.parameters(), start):  # every entry moved by at most lr * 1e-4
        assert np.abs(p.detach().numpy() - s).max() == pytest.approx(1e-4, abs=1e-6)


def test_data_can_be_a_loader_of_batches(small_mlp):
    x, y = batch(et, n=8, features=20)
    loader = [(x[:4], y[:4]), (x[4:], y[4:])]
    model = GradientInspectorModel(small_mlp, loader, optimizer=et.optim.SGD(
        small_mlp.parameters(), lr=0.0))
    model.step(2)  # lr 0: only the batch changes, and the third batch is the first again
    first, second, third = (r.loss for r in model.history)
    assert first != second and first == pytest.approx(third)
    with pytest.raises(ValueError, match="no batches"):
        GradientInspectorModel(small_mlp, [])


def test_same_numbers_as_real_torch(small_mlp, eval_batch, real_torch):
    twin = copy_weights(real_torch, small_mlp, mlp(real_torch.nn))
    x, y = eval_batch
    ours = GradientInspectorModel(small_mlp, eval_batch)
    theirs = GradientInspectorModel(twin, (real_torch.tensor(x.numpy()),
                                           real_torch.tensor(y.numpy())))
    assert ours.loss == pytest.approx(theirs.loss, rel=1e-5)
    for a, b in zip(ours.rows, theirs.rows):
        assert a.name == b.name and a.shape == b.shape
        assert a.stats.norm == pytest.approx(b.stats.norm, rel=1e-4)
    a, b = ours.clip_norm(0.01), theirs.clip_norm(0.01)
    assert a.total_norm == pytest.approx(b.total_norm, rel=1e-5)
    assert a.clip_coef_clamped == pytest.approx(b.clip_coef_clamped, rel=1e-5)
    # on torch, the numbers are torch's own clip_grad_norm_'s
    clone = copy.deepcopy(twin)
    for p, q in zip(twin.parameters(), clone.parameters()):
        q.grad = p.grad.clone()
    assert b.total_norm == float(real_torch.nn.utils.clip_grad_norm_(clone.parameters(), 0.01))
    assert [b.after[n] for n, _ in clone.named_parameters()] == pytest.approx(
        [float(p.grad.norm()) for p in clone.parameters()], rel=1e-6)


# -- the view ----------------------------------------------------------------------------
def test_view_sliders_preview_clipping(small_mlp, eval_batch):
    view = GradientInspector(small_mlp, eval_batch)
    assert repr(view) == "GradientInspector(Sequential, 6 parameters)"
    first = png_bytes(view.image)
    assert is_png(first) and is_png(png_bytes(view.timeline))
    total = view.model.clip_norm(1.0).total_norm
    assert f"returned total_norm = <b>{total:.6g}</b>" in view.caption.value
    view.max_norm.value = 10 ** round(np.log10(total / 4), 2)
    assert "every .grad × " in view.caption.value
    assert png_bytes(view.image) != first
    before = png_bytes(view.image)
    view.clip_value.value = 1e-4
    assert "clip_value=0.0001" in view.caption.value and png_bytes(view.image) != before
    assert "norm after<br>clip_grad_value_" in view.table.value and "0.weight" in view.table.value
    assert view.model.steps == 0  # the sliders never train


def test_view_steps_and_timeline(small_mlp, eval_batch):
    view = GradientInspector(small_mlp, eval_batch)
    timeline = png_bytes(view.timeline)
    view.step_button.click()
    assert view.model.steps == 1 and "after 1 optimizer steps" in view.title.value
    assert png_bytes(view.timeline) != timeline
    view.clip_mode.value = "norm"
    view.max_norm.value = 1e-3
    view.steps_button.click()
    assert view.model.steps == 11 and len(view.model.history) == 12
    assert {r.clip for r in view.model.history[1:11]} == {"norm"}


def test_a_step_sends_its_pictures_before_its_texts(small_mlp, eval_batch):
    """What reaches the browser after "step": the progress, then the bars and histograms
    (decoded while the timeline is drawn), the timeline, and only then the texts."""
    view = GradientInspector(small_mlp, eval_batch)
    sent = []
    for name in ("title", "image", "timeline", "caption", "table"):
        getattr(view, name).observe(lambda change, name=name: sent.append(name), names="value")
    view.step_button.click()
    assert sent == ["title", "image", "timeline", "caption", "table", "title"]


def test_pictures_drawn_in_layers_are_the_pictures_of_a_full_render(small_mlp, eval_batch):
    """The pictures are pasted from kept layers (the frame; the gradients' bars, histograms
    and timeline lines; the sliders' artists on top): after slider moves and steps each one
    is, pixel for pixel, what rendering the whole figure again gives."""
    view = GradientInspector(small_mlp, eval_batch)
    view.clip_mode.value = "norm"
    view.clip_value.value = 1e-3
    view.max_norm.value = 0.05
    view.step_button.click()
    view.clip_value.value = 0.05

    def full_render(canvas):
        canvas.invalidate()
        return canvas.png()

    assert png_bytes(view.image) == full_render(view.canvas)
    assert png_bytes(view.timeline) == full_render(view.timeline_canvas)
    view.max_norm.value = 0.5  # the timeline's max_norm line moves; the clip_value one does not
    timeline = png_bytes(view.timeline)
    assert timeline == full_render(view.timeline_canvas)
    view.clip_value.value = 0.01
    assert png_bytes(view.timeline) == timeline


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_gradients_on_a_new_scale_redraw_their_axes_not_the_frames(monkeypatch, small_mlp,
                                                                    eval_batch, scale):
    """Gradients a million times larger move every axis range: the axes are drawn again
    (frame parts), the frames are pasted; the pictures are those of a full render (also
    with larger text, where an axis label is wider than its plot)."""
    set_text_scale(scale)
    try:
        view = GradientInspector(small_mlp, eval_batch)
    finally:
        set_text_scale()
    limits = (view.norms_panel.ax.get_xlim(), view.hist_panel.ax.get_xlim())
    full_draws = []
    for canvas in (view.canvas, view.timeline_canvas):
        monkeypatch.setattr(canvas.figure.canvas, "draw", lambda: full_draws.append(1))
    with et.no_grad():
        for p in small_mlp.parameters():
            p.mul_(1e3)
    view.refresh()
    assert (view.norms_panel.ax.get_xlim(), view.hist_panel.ax.get_xlim()) != limits
    assert not full_draws
    monkeypatch.undo()
    view.refresh()  # new gradients on the same scale: the kept axes are pasted back
    for canvas, picture in ((view.canvas, view.image), (view.timeline_canvas, view.timeline)):
        canvas.invalidate()
        assert png_bytes(picture) == canvas.png()


def test_x_axis_labels_kept_in_place_are_where_matplotlib_places_them(small_mlp, eval_batch):
    """The x axes' labels keep the place of the first drawing (no measuring of tick labels
    at each new range): after ranges a million times larger it is still the place
    matplotlib's own placement gives."""
    view = GradientInspector(small_mlp, eval_batch)
    axes = [view.norms_panel.ax.xaxis, view.hist_panel.ax.xaxis, view.timeline_panel.ax.xaxis]
    with et.no_grad():
        for p in small_mlp.parameters():
            p.mul_(1e3)
    view.train(12)  # new ranges on every axis (the timeline's steps too)
    for axis in axes:
        kept = axis.label.get_position()
        renderer = axis.figure.canvas.get_renderer()
        axis._autolabelpos = True  # matplotlib's placement, as a fresh figure's
        axis._update_label_position(renderer)
        assert axis.label.get_position() == pytest.approx(kept)
        axis._autolabelpos = False


def test_a_norm_axis_with_no_finite_norm_keeps_its_range(small_mlp, eval_batch):
    """All norms NaN: no bar to place, so the axis keeps the range it had (no new axis to
    draw, nothing that looks like a scale for NaN)."""
    with et.no_grad():
        for p in small_mlp[0].parameters():
            p.mul_(1e-6)  # the later layers' gradients too: norms over 6 decades and more
    view = GradientInspector(small_mlp, eval_batch)
    limits = view.norms_panel.ax.get_xlim()
    assert limits[1] / limits[0] > 1e8  # wider than any range put around no number
    with et.no_grad():
        small_mlp[-1].bias[0] = float("nan")  # the output's: every gradient turns NaN
    view.refresh()
    assert np.isnan(view.model.history[-1].total_norm)
    assert all(np.isnan(r.stats.norm) for r in view.model.rows)
    assert view.norms_panel.ax.get_xlim() == limits


def test_view_on_a_real_torch_module(real_torch):
    model = deep_mlp(real_torch.nn, "Sigmoid", depth=4)
    view = GradientInspector(model, batch(real_torch), optimizer=real_torch.optim.Adam(
        model.parameters(), lr=1e-3))
    view.max_norm.value = 1e-3
    view.clip_mode.value = "value"
    view.step_button.click()
    assert view.model.steps == 1 and is_png(png_bytes(view.image))
    assert "every .grad × " in view.caption.value and "0.weight" in view.table.value


# -- what the pictures and captions say (issue 24) -----------------------------------------
def test_clamped_fraction_weighs_each_parameter_by_its_entries(small_mlp, eval_batch):
    """The docstring's promise: the fraction of ALL entries clip_grad_value_ changes, not
    the mean of the per-parameter fractions (a small bias would count as much as a weight)."""
    model = GradientInspectorModel(small_mlp, eval_batch)
    grads = grads_of(small_mlp)
    clip = float(np.median(np.abs(grads["0.weight"])))
    result = model.clip_value(clip)
    changed = sum(int(np.count_nonzero(np.abs(g) > clip)) for g in grads.values())
    assert result.changed == pytest.approx(changed / sum(g.size for g in grads.values()))
    assert result.changed != pytest.approx(np.mean(list(result.clamped.values())))
    view = GradientInspector(small_mlp, eval_batch)
    view.clip_value.value = clip
    assert f"{view.model.clip_value(view.clip_value.value).changed:.1%} of the entries" in \
        view.caption.value


def test_an_off_scale_max_norm_is_labelled_at_the_edge_not_drawn_inside(small_mlp, eval_batch):
    view = GradientInspector(small_mlp, eval_batch)
    low, high = view.norms_panel.ax.get_xlim()
    view.max_norm.value = 1000.0
    assert 1000.0 > high and view.norms_panel.edge.get_visible()
    assert "1e+03 →" in view.norms_panel.edge.get_text()
    assert np.isnan(view.norms_panel.limit.get_xdata()).all()  # no line at the edge
    view.clip_mode.value = "norm"
    assert view.timeline_panel.edge.get_visible() and not view.timeline_panel.limit.get_visible()
    view.max_norm.value = 10 ** round(np.log10(view.model.clip_norm(1).total_norm), 1)
    assert not view.norms_panel.edge.get_visible()
    assert not np.isnan(view.norms_panel.limit.get_xdata()).any()
    view.clip_value.value = 10.0  # beyond every |grad|: the histogram says so at its edge
    assert view.hist_panel.edge.get_visible() and "clip_value" in view.hist_panel.edge.get_text()


def test_nan_gradients_are_shown_as_nan_not_as_nothing_clipped(small_mlp, eval_batch):
    view = GradientInspector(small_mlp, eval_batch)
    with et.no_grad():
        small_mlp[0].weight[0, 0] = float("nan")
    view.refresh()
    result = view.model.clip_norm(view.max_norm.value)
    assert not result.finite and np.isnan(result.total_norm)
    assert "nothing clipped" not in view.caption.value
    assert "total_norm is nan" in view.caption.value and "error_if_nonfinite" in view.caption.value
    assert view.norms_panel.nan_note.get_visible()
    assert "nan or inf" in view.norms_panel.nan_note.get_text()
    assert "NaN or inf" in view.hist_panel.note.get_text()


def test_gradients_that_look_the_same_keep_their_drawn_layer(monkeypatch, small_mlp,
                                                              eval_batch):
    """NaN gradients step after step show the same bars, histograms and notes: the layer
    with them drawn is kept (the notes' text is most of its cost) and the picture is byte
    for byte a full render, so the widget's value does not change and nothing is sent.
    Gradients that differ draw the layer again."""
    view = GradientInspector(small_mlp, eval_batch)
    with et.no_grad():
        small_mlp[0].weight[0, 0] = float("nan")
    view.step_button.click()  # everything downstream of the NaN weight turns NaN
    view.step_button.click()
    picture = bytes(view.image.value)
    drawn = []
    monkeypatch.setattr(view.canvas, "_draw_visible",
                        lambda artists, draw=view.canvas._draw_visible: drawn.append(
                            list(artists)) or draw(artists))
    sent = []
    view.image.observe(lambda change: sent.append(change["new"]), names="value")
    view.step_button.click()
    assert view.norms_panel.nan_note.get_visible() and view.model.steps == 3
    assert view.norms_panel.nan_note not in [a for artists in drawn for a in artists]
    assert bytes(view.image.value) == picture and not sent
    view.canvas.invalidate()
    assert view.canvas.png() == picture
    with et.no_grad():
        for p in small_mlp.parameters():
            p.copy_(et.ones_like(p) * 0.01)
    drawn.clear()
    view.refresh()  # finite gradients again: the layer is drawn anew
    assert view.norms_panel.before in [a for artists in drawn for a in artists]
    assert sent and bytes(view.image.value) != picture


def test_a_big_gradient_is_histogrammed_on_a_stated_seeded_sample(monkeypatch, small_mlp,
                                                                  eval_batch):
    import widgets.gradient_inspector as gi
    monkeypatch.setattr(gi, "SAMPLE_SIZE", 100)
    monkeypatch.setattr("widgets.gradient_inspector_view.SAMPLE_SIZE", 100)
    view = GradientInspector(small_mlp, eval_batch)
    row = view.model.row("0.weight")  # 16 x 20 = 320 entries
    assert row.sampled == 100 and row.log_counts.sum() <= 100
    assert row.stats.norm == pytest.approx(np.linalg.norm(grads_of(small_mlp)["0.weight"]))
    again = GradientInspectorModel._row("0.weight", small_mlp[0].weight.grad)
    np.testing.assert_array_equal(again.log_counts, row.log_counts)  # seeded: the same sample
    assert "a random sample of 100 entries" in view.caption.value
    assert "0.bias" not in view.caption.value.split("histograms of")[1].split(":")[0]


def _run_in_a_kernel(monkeypatch, model, data, count, step_s):
    """``start_training(count)`` in a running event loop, each step taking ``step_s`` seconds
    of a fake clock: ``(view, sent)``, where ``sent`` lists in order what reached the widgets:
    ``("title", html)``, and ``(picture, steps taken, png, controls disabled)`` for the
    ``"timeline"`` and the ``"image"`` (bars and histograms)."""
    import asyncio

    import widgets.gradient_inspector_view as giv
    clock = [0.0]
    monkeypatch.setattr(giv.time, "perf_counter", lambda: clock[0])

    async def scenario():
        view = GradientInspector(model, data)
        step = view.model.step

        def timed_step(*args, **kwargs):
            clock[0] += step_s
            return step(*args, **kwargs)
        view.model.step = timed_step
        sent = []
        view.title.observe(lambda change: sent.append(("title", change["new"])), names="value")
        for name in ("timeline", "image"):
            getattr(view, name).observe(lambda change, name=name: sent.append(
                (name, view.model.steps, bytes(change["new"]), view.max_norm.disabled)),
                names="value")
        task = view.start_training(count)
        assert view.steps_button.disabled and view.clip_mode.disabled and view.model.steps == 0
        await task
        assert not (view.steps_button.disabled or view.max_norm.disabled)
        return view, sent
    return asyncio.run(scenario())


@pytest.mark.parametrize("step_s, drawn_after", [(0.03, [1, 5, 9]), (0.3, list(range(1, 10)))])
def test_ten_steps_in_a_kernel_are_paced_for_the_browser(monkeypatch, small_mlp, eval_batch,
                                                         step_s, drawn_after):
    """In a running event loop "10 steps" returns at once and trains in a task: the progress
    in the title first, the timeline after the first step and then at most every
    ``REDRAW_S`` (0.1 s), so quick steps send a picture every few steps and slow ones after
    each; the bars and histograms once, at the end. Each timeline sent is the timeline of
    the steps taken, as a fresh inspector trained as far draws it, and says so in the title."""
    twin = copy.deepcopy(small_mlp)
    view, sent = _run_in_a_kernel(monkeypatch, small_mlp, eval_batch, 10, step_s)
    assert view.model.steps == 10 and "after 10 optimizer steps" in view.title.value
    assert sent[0][0] == "title" and "training: step 1 / 10…" in sent[0][1]
    timelines = [event[1:] for event in sent if event[0] == "timeline"]
    assert [steps for steps, _, _ in timelines] == drawn_after + [10]
    assert all(disabled for _, _, disabled in timelines[:-1]) and not timelines[-1][2]
    assert [event[1] for event in sent if event[0] == "image"] == [10]  # once, at the end
    titles = [event[1] for event in sent if event[0] == "title"]
    for steps in drawn_after:
        loss = view.model.history[steps].loss
        assert any(f"step {steps} / 10, loss {loss:.4f}" in title for title in titles)
    fresh = GradientInspector(twin, eval_batch)  # the same weights and data
    for steps, png, _ in timelines[:2] + timelines[-1:]:
        fresh.train(steps - fresh.model.steps)
        assert png_bytes(fresh.timeline) == png


def test_a_run_draws_an_unchanged_timeline_again_after_the_next_step(monkeypatch, small_mlp,
                                                                     eval_batch):
    """NaN gradients from the start: the timeline has nothing new to show, so nothing is
    sent (and the run does not rest for it); it is drawn again after each step, so that a
    change would leave at once."""
    with et.no_grad():
        small_mlp[-1].bias[0] = float("nan")
    drawn = []
    draw = GradientInspector._draw_progress
    monkeypatch.setattr(GradientInspector, "_draw_progress",
                        lambda self, done, count: drawn.append(done) or draw(self, done, count))
    view, sent = _run_in_a_kernel(monkeypatch, small_mlp, eval_batch, 10, 0.03)
    assert drawn == list(range(1, 10))
    assert not [event for event in sent if event[0] == "timeline"]


def test_a_run_of_steps_summarises_the_gradients_once(monkeypatch, small_mlp, eval_batch):
    """The statistics and histograms (a pass over every gradient) only for the last step."""
    rows = []
    row = GradientInspectorModel._row
    monkeypatch.setattr(GradientInspectorModel, "_row",
                        staticmethod(lambda name, grad: rows.append(name) or row(name, grad)))
    view, _ = _run_in_a_kernel(monkeypatch, small_mlp, eval_batch, 10, 0.03)
    assert len(rows) == 2 * 6  # the first gradients, and the last: six parameters each
    assert view.model.summarised and view.model.rows[0].stats.norm == pytest.approx(
        view.model.history[-1].norms["0.weight"])


# -- pictures rendered ahead (issue 25: 100 ms as a person sees it) ------------------------
def _rested_inspector(model, data, clip_mode="norm"):
    """An inspector built in a running event loop (a kernel), left alone until what it
    renders ahead is ready."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    def build():
        view = GradientInspector(model, data)
        view.clip_mode.value = clip_mode
        return view
    return asyncio.run(built_in_a_kernel(build, lambda view: not view.ahead.pending))


def _arrow(slider, steps):
    """The value a browser's ``FloatLogSlider`` sends after ``steps`` arrow keys: its own
    ``base ** exponent`` on the slider's grid."""
    import math
    exponent = round(math.log10(slider.value) / slider.step) * slider.step + steps * slider.step
    return slider.base ** exponent


def test_slider_neighbours_rendered_ahead_are_shown_without_drawing(monkeypatch, small_mlp,
                                                                    eval_batch):
    """In a kernel, once the controls rest, one step either way of each slider is ready: the
    slider shows it without drawing, byte for byte (picture, caption, table, timeline) what
    drawing that position now gives; moving back shows the first picture again."""
    view = _rested_inspector(small_mlp, eval_batch)
    first = (bytes(view.image.value), view.caption.value, view.table.value,
             bytes(view.timeline.value))
    assert len(view.pictures) == 5 and len(view.timelines) == 4  # current + 4 / current + 3

    def no_drawing(*args):
        raise AssertionError("drawn again")
    for canvas in (view.canvas, view.timeline_canvas):
        monkeypatch.setattr(canvas, "png", no_drawing)
    shown = {}
    for slider, steps in ((view.max_norm, 1), (view.max_norm, -1), (view.clip_value, -1),
                          (view.clip_value, 1)):
        slider.value = _arrow(slider, steps)
        shown[slider.description] = (bytes(view.image.value), view.caption.value,
                                     view.table.value, bytes(view.timeline.value))
        slider.value = _arrow(slider, -steps)  # and back: the first picture
        assert (bytes(view.image.value), view.caption.value, view.table.value,
                bytes(view.timeline.value)) == first
    view.clip_mode.value = "none"  # the timeline without the max_norm line: ready too
    monkeypatch.undo()
    without_line = bytes(view.timeline.value)
    view.clip_mode.value = "norm"
    view.forget_pictures()
    view.clip_mode.value = "none"
    assert bytes(view.timeline.value) == without_line  # drawn now: the same
    view.clip_mode.value = "norm"
    view.clip_value.value = _arrow(view.clip_value, 1)
    view.clip_value.value = _arrow(view.clip_value, -1)
    view.max_norm.value = _arrow(view.max_norm, -1)  # drawn now (the cache was emptied)
    assert (bytes(view.image.value), view.caption.value, view.table.value,
            bytes(view.timeline.value)) == shown["max_norm"]


def test_new_gradients_forget_the_kept_pictures(small_mlp, eval_batch):
    view = _rested_inspector(small_mlp, eval_batch)
    position = _arrow(view.max_norm, 1)
    before = view.pictures[(_position(position), _position(view.clip_value.value))][0]
    view.step_button.click()
    assert list(view.pictures) == [(_position(view.max_norm.value),
                                    _position(view.clip_value.value))]
    view.max_norm.value = position
    assert bytes(view.image.value) != before  # the new gradients, not the kept picture


def test_a_big_model_renders_only_the_cheap_neighbours_ahead(monkeypatch, small_mlp,
                                                             eval_batch):
    """Above ``AHEAD_ENTRIES`` gradient entries the clip_value neighbours (each a pass over
    every entry) are not rendered ahead; the max_norm ones (no pass) still are."""
    monkeypatch.setattr("widgets.gradient_inspector_view.AHEAD_ENTRIES", 100)
    view = _rested_inspector(small_mlp, eval_batch)
    assert {m for m, _ in view.pictures} == {
        _position(value) for value in (view.max_norm.value, _arrow(view.max_norm, 1),
                                       _arrow(view.max_norm, -1))}
    assert {c for _, c in view.pictures} == {_position(view.clip_value.value)}


def test_a_run_of_steps_renders_ahead_only_when_it_ends(small_mlp, eval_batch):
    """Between the steps of "10 steps" nothing is rendered ahead (the next step would wait
    for it); after the last one the neighbours are, and the next step rehearsed."""
    import asyncio

    async def scenario():
        view = GradientInspector(small_mlp, eval_batch)
        scheduled = []
        view.ahead.schedule = lambda tasks: scheduled.append((view.model.steps, list(tasks)))
        await view.start_training(3)
        return scheduled
    scheduled = asyncio.run(scenario())
    assert scheduled[0] == (0, [])  # the run starts by dropping what waited
    assert [steps for steps, _ in scheduled[1:]] == [3] and len(scheduled[1][1]) == 10


def test_the_next_steps_axis_rendered_ahead_is_pasted_and_is_what_drawing_gives(
        monkeypatch, small_mlp, eval_batch):
    """The timeline's steps axis doubles when the steps pass the last one shown (10, 22,
    ...): known in advance, its axes are rendered ahead (a RenderAhead task); the step that
    passes it pastes them instead of drawing, byte for byte a full render. Rendering ahead
    leaves no trace in what is shown."""
    from widgets._render import FramePart
    view = GradientInspector(small_mlp, eval_batch)
    view.train(10)
    panel = view.timeline_panel
    limits, picture = panel.ax.get_xlim(), bytes(view.timeline.value)
    panel.render_next_steps_axis()  # what the task does while the controls rest
    assert panel.ax.get_xlim() == limits
    view.timeline_canvas.invalidate()
    assert view.timeline_canvas.png() == picture  # nothing of the range ahead shows
    panel.render_next_steps_axis()
    drawn = []
    monkeypatch.setattr(FramePart, "draw", lambda self, layout, draw=FramePart.draw: (
        drawn.append(self), draw(self, layout))[1])
    ylim = panel.ax.get_ylim()
    view.step_button.click()  # step 11: the steps axis now reaches 22
    assert panel.ax.get_xlim() == (-0.5, 22.5) and panel.ax.get_ylim() == ylim
    assert panel.axes_part not in drawn
    monkeypatch.undo()
    view.timeline_canvas.invalidate()
    assert view.timeline_canvas.png() == bytes(view.timeline.value)


# -- "step ▶" rehearsed on copies while the controls rest (issue 25) ----------------------
def _dropout_net():
    """A net whose step draws random numbers (dropout) and keeps optimizer state (momentum),
    with weights x 4: its gradients grow step by step, so the axes move."""
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 32),
                          nn.ReLU(), nn.Linear(32, 4))
    with et.no_grad():
        for layer in (model[0], model[3], model[5]):
            layer.weight.mul_(4.0)
    return model


def _inspector_of(model, rehearse, clicks=3):
    """An inspector (clipping by norm) after ``clicks`` steps, each rehearsed first
    (``rehearse``: what the RenderAhead tasks do while the controls rest) or not; with what
    each click showed."""
    import warnings

    view = GradientInspector(model, batch(et), optimizer=et.optim.SGD(
        model.parameters(), lr=0.05, momentum=0.9))
    view.clip_mode.value = "norm"
    view.max_norm.value = 2.0
    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _ in range(clicks):
            if rehearse:
                view._render_step_ahead("image")
                view._render_step_ahead("timeline")
            view.step_button.click()
            shown.append((bytes(view.image.value), bytes(view.timeline.value), view.caption.value,
                          view.table.value, view.title.value))
    return view, shown


def _training_state(view):
    """Every value a step leaves: parameters, gradients, their versions, the optimizer's state
    and the random number generator."""
    model = view.model
    state = [(n, p.detach().numpy().tobytes(), p.grad.numpy().tobytes(), p._version)
             for n, p in model.module.named_parameters()]
    buffers = [(k, [v.numpy().tobytes() for v in s.values() if hasattr(v, "numpy")])
               for k, s in model.optimizer.state_dict()["state"].items()]
    return state, buffers, et.get_rng_state().numpy().tobytes()


def test_a_rehearsed_step_leaves_model_optimizer_and_generator_bit_identical():
    """Rehearsing each step on copies changes nothing real: after three rehearsed clicks the
    parameters, gradients, versions, momentum buffers and random generator are bit for bit
    those of three clicks with no rehearsal."""
    rehearsed, _ = _inspector_of(_dropout_net(), rehearse=True)
    plain, _ = _inspector_of(_dropout_net(), rehearse=False)
    assert _training_state(rehearsed) == _training_state(plain)
    assert repr(rehearsed.model.history) == repr(plain.model.history)  # (repr: NaN == NaN)


def test_a_rehearsed_step_is_shown_without_drawing_and_is_what_drawing_gives(monkeypatch):
    """The click finds the pictures rendered ahead (no canvas draws) and shows byte for byte
    what a view that never rehearsed draws: pictures, caption, table and title."""
    from widgets._render import Canvas

    model = _dropout_net()
    view = GradientInspector(model, batch(et), optimizer=et.optim.SGD(
        model.parameters(), lr=0.05, momentum=0.9))
    view.clip_mode.value = "norm"
    view.max_norm.value = 2.0
    view._render_step_ahead("image")
    view._render_step_ahead("timeline")

    def no_drawing(*args):
        raise AssertionError("drawn at the click")
    monkeypatch.setattr(Canvas, "png", no_drawing)
    view.step_button.click()
    monkeypatch.undo()
    _, plain = _inspector_of(_dropout_net(), rehearse=False, clicks=1)
    assert (bytes(view.image.value), bytes(view.timeline.value), view.caption.value,
            view.table.value, view.title.value) == plain[0]
    # and over several steps whose axes move
    assert _inspector_of(_dropout_net(), rehearse=True)[1] == _inspector_of(
        _dropout_net(), rehearse=False)[1]


def test_rehearsing_leaves_no_trace_in_what_is_shown(small_mlp, eval_batch):
    """After a rehearsal the panels show the current gradients again: a slider position drawn
    now is what it was before, and so are the axes' ranges."""
    view = GradientInspector(small_mlp, eval_batch)
    limits = [(panel.ax.get_xlim(), panel.ax.get_ylim()) for panel in view._panels()]
    view.forget_pictures()
    view.max_norm.value = 0.05
    before = (bytes(view.image.value), bytes(view.timeline.value), view.caption.value)
    view._render_step_ahead("image")
    view._render_step_ahead("timeline")
    assert [(panel.ax.get_xlim(), panel.ax.get_ylim()) for panel in view._panels()] == limits
    view.forget_pictures()
    view.max_norm.value = 1.0
    view.max_norm.value = 0.05
    assert (bytes(view.image.value), bytes(view.timeline.value), view.caption.value) == before
    for canvas in (view.canvas, view.timeline_canvas):  # and the kept layers are right
        canvas.invalidate()
    view.forget_pictures()
    view.max_norm.value = 1.0
    view.max_norm.value = 0.05
    assert (bytes(view.image.value), bytes(view.timeline.value), view.caption.value) == before


def test_a_rehearsal_that_no_longer_holds_is_drawn_anew(monkeypatch):
    """The learning rate changed after the rehearsal: the step gives other gradients, whose
    key finds nothing; they are drawn, as a view that never rehearsed draws them."""
    from widgets._render import Canvas

    view, _ = _inspector_of(_dropout_net(), rehearse=True, clicks=0)
    view._render_step_ahead("image")
    view._render_step_ahead("timeline")
    view.model.optimizer.param_groups[0]["lr"] = 0.01
    drawn = []
    monkeypatch.setattr(Canvas, "png", lambda self, png=Canvas.png: (drawn.append(self),
                                                                      png(self))[1])
    view.step_button.click()
    assert len(drawn) == 2
    plain, _ = _inspector_of(_dropout_net(), rehearse=False, clicks=0)
    plain.model.optimizer.param_groups[0]["lr"] = 0.01
    plain.step_button.click()
    assert (bytes(view.image.value), bytes(view.timeline.value), view.table.value) == (
        bytes(plain.image.value), bytes(plain.timeline.value), plain.table.value)


def test_only_one_batch_without_hooks_on_a_small_model_is_rehearsed(monkeypatch, small_mlp,
                                                                    eval_batch):
    """A loader's next batch cannot be read without taking it; a hook would run again for the
    copy; a big model's copy and step would hold up a click: none of them is rehearsed."""
    assert GradientInspectorModel(small_mlp, eval_batch).can_rehearse()
    assert not GradientInspectorModel(small_mlp, [eval_batch, eval_batch]).can_rehearse()
    handle = small_mlp[0].weight.register_hook(lambda grad: grad)
    assert not GradientInspectorModel(small_mlp, eval_batch).can_rehearse()
    handle.remove()
    handle = small_mlp.register_forward_hook(lambda *args: None)
    assert not GradientInspectorModel(small_mlp, eval_batch).can_rehearse()
    handle.remove()
    view = GradientInspector(small_mlp, eval_batch)
    assert view._can_rehearse()
    monkeypatch.setattr("widgets.gradient_inspector_view.REHEARSE_PARAMETERS", 100)
    assert not view._can_rehearse()


def test_in_a_kernel_the_step_after_a_step_is_rehearsed_first(small_mlp, eval_batch):
    """In a kernel the rehearsal is among what the controls' rest renders; after a step it
    comes first (the likely next input), after a slider last."""
    import asyncio

    async def scenario():
        view = GradientInspector(small_mlp, eval_batch)
        scheduled = []
        view.ahead.schedule = lambda tasks: scheduled.append(list(tasks))
        view.step_button.click()
        view.max_norm.value = 0.5
        return view, scheduled
    view, (after_step, after_slider) = asyncio.run(scenario())
    assert len(after_step) == len(after_slider) == 10
    after_step[0]()  # the rehearsal's image first after a step
    assert [set(entry) for entry in view.steps_ahead.values()] == [{"image"}]
    assert after_step[2] == after_slider[-1] == view.timeline_panel.render_next_steps_axis
    after_slider[-2]()  # its timeline after the neighbours, after a slider
    assert [set(entry) for entry in view.steps_ahead.values()] == [{"image", "timeline"}]


def test_a_model_that_cannot_be_copied_is_not_rehearsed_and_still_steps(small_mlp, eval_batch):
    """A module ``deepcopy`` refuses (here it holds a lock): the rehearsal stops quietly for
    this view (no error from the idle tasks), and "step ▶" trains and draws as before."""
    import threading

    small_mlp.lock = threading.Lock()
    view = GradientInspector(small_mlp, eval_batch)
    assert view._can_rehearse()
    view._render_step_ahead("image")
    assert not view._can_rehearse() and not view.steps_ahead
    view.step_button.click()
    assert view.model.steps == 1


def test_a_slider_moved_back_finds_its_rehearsal_and_its_pictures(monkeypatch, small_mlp,
                                                                  eval_batch):
    """Arrow keys back and forth: the rehearsal of each position is kept until the next
    gradients, so moving back neither steps the copies again nor draws."""
    from widgets._render import Canvas

    view = GradientInspector(small_mlp, eval_batch)
    for value in (1.0, 0.5):
        view.max_norm.value = value
        view._render_step_ahead("image")
    view.max_norm.value = 1.0

    def no_drawing(*args, **kwargs):
        raise AssertionError("rehearsed or drawn again")
    monkeypatch.setattr(Canvas, "png", no_drawing)
    monkeypatch.setattr(view.model, "rehearsal", no_drawing)
    view._render_step_ahead("image")
    monkeypatch.undo()
    view.step_button.click()  # the new gradients: what was rehearsed before is forgotten
    assert not view.rehearsed
