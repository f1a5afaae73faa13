"""TrainEvalExplorerModel (pure Python) and the TrainEvalExplorer view, driven headlessly."""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
from test_layering import WIDGETS, imported_top_level_names
from widgets import TrainEvalExplorer, TrainEvalExplorerModel
from widget_helpers import is_png, png_bytes


def noisy_class(framework):
    """A user's own modal module: adds noise in training only (it checks self.training)."""

    class Noisy(framework.nn.Module):
        def forward(self, x):
            return x + 0.5 * framework.randn(x.shape) if self.training else x
    return Noisy


def net(framework, momentum=0.1, p=0.5):
    """Sequential(0 Linear, 1 BatchNorm1d, 2 ReLU, 3 Dropout, 4 Noisy, 5 Linear)."""
    nn = framework.nn
    framework.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12, momentum=momentum), nn.ReLU(),
                         nn.Dropout(p), noisy_class(framework)(), nn.Linear(12, 3))


def inputs(framework, n=8, batches=4, seed=0):
    rng = np.random.default_rng(seed)
    x = framework.tensor(rng.standard_normal((n, 6)).astype(np.float32))
    fed = [framework.tensor((2 * rng.standard_normal((32, 6)) + 1).astype(np.float32))
           for _ in range(batches)]
    return x, fed


def buffers(model):
    return {n: b.detach().numpy().copy() for n, b in model.named_buffers()}


def test_the_model_file_imports_no_gui_library():
    names = imported_top_level_names(WIDGETS / "train_eval_explorer.py")
    assert not names & {"ipywidgets", "matplotlib", "IPython", "PIL", "edutorch", "torch"}
    # the view too takes the framework from the module it is given
    assert not imported_top_level_names(WIDGETS / "train_eval_explorer_view.py") & {
        "edutorch", "torch"}


def test_finds_the_modal_modules_including_the_users_own():
    x, _ = inputs(et)
    model = TrainEvalExplorerModel(net(et), x)
    found = [(m.name, m.class_name, m.kind) for m in model.modal_modules()]
    assert found == [("1", "BatchNorm1d", "batchnorm"), ("3", "Dropout", "dropout"),
                     ("4", "Noisy", "module")]
    # not modal: dropout with p=0, batch norm without running statistics
    nn = et.nn
    quiet = nn.Sequential(nn.Linear(6, 4), nn.Dropout(0.0),
                          nn.BatchNorm1d(4, track_running_stats=False))
    assert TrainEvalExplorerModel(quiet, x).modal_modules() == []


def test_a_parent_of_a_modal_module_says_what_it_contains():
    nn = et.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.drop = nn.Linear(6, 6), nn.Dropout(0.3)

        def forward(self, x):
            return self.drop(self.fc(x))
    x, _ = inputs(et)
    modal = TrainEvalExplorerModel(nn.Sequential(Block(), nn.Linear(6, 2)), x).modal_modules()
    assert [(m.name, m.inside) for m in modal] == [("0", ("0.drop",)), ("0.drop", ())]


def test_eval_output_is_the_same_every_call_and_train_output_is_not():
    x, _ = inputs(et)
    model = net(et)
    explorer = TrainEvalExplorerModel(model, x)
    before, state = buffers(model), et.get_rng_state()
    first, second = explorer.compare(), explorer.compare()
    assert first.train_change is None and first.eval_change is None
    assert second.eval_change == 0.0 and second.train_change > 0.1
    np.testing.assert_array_equal(first.eval_output, second.eval_output)
    with et.no_grad():
        np.testing.assert_array_equal(second.eval_output, model.eval()(x).numpy())
    model.train()
    # looking changes nothing: buffers, the user's random stream, the modes
    for name, value in buffers(model).items():
        np.testing.assert_array_equal(value, before[name])
    assert et.equal(et.get_rng_state(), state)
    assert all(m.training for m in model.modules())
    model[3].eval()  # mixed modes are restored one by one
    explorer.compare()
    assert [m.training for m in model] == [True, True, True, False, True, True]


def test_dropout_zeroes_about_p_and_scales_the_rest_by_one_over_one_minus_p():
    nn = et.nn
    et.manual_seed(0)
    x = et.randn(64, 100)
    explorer = TrainEvalExplorerModel(nn.Sequential(nn.Dropout(0.3)), x)
    explorer.compare()
    call = explorer.dropout_call("0")
    recorded = explorer.comparisons[-1].train_calls["0"]
    assert call.p == 0.3 and call.scale == pytest.approx(1 / 0.7)
    assert call.fraction == pytest.approx(0.3, abs=0.02)
    kept = ~call.zeroed
    np.testing.assert_allclose(recorded.output[kept], recorded.input[kept] / 0.7, rtol=1e-6)
    assert np.all(recorded.output[call.zeroed] == 0)
    assert call.observed_scale == pytest.approx(1 / 0.7, rel=1e-6)
    explorer.compare()
    assert not np.array_equal(explorer.dropout_call("0").zeroed, call.zeroed)


def test_batch_norm_uses_batch_statistics_in_train_and_running_ones_in_eval():
    x, fed = inputs(et)
    model = net(et)
    explorer = TrainEvalExplorerModel(model, x, batches=fed)
    explorer.next_batch(2)
    comparison = explorer.compare()
    stats = explorer.batch_norm_call("1")
    seen = comparison.train_calls["1"].input.astype(np.float64)
    np.testing.assert_allclose(stats.batch_mean, seen.mean(axis=0))
    np.testing.assert_allclose(stats.batch_var, seen.var(axis=0))
    np.testing.assert_array_equal(stats.running_mean, model[1].running_mean.numpy())
    bn, given = model[1], comparison.eval_calls["1"].input
    expected = ((given - stats.running_mean) / np.sqrt(stats.running_var + bn.eps)
                * bn.weight.detach().numpy() + bn.bias.detach().numpy())
    np.testing.assert_allclose(comparison.eval_calls["1"].output, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_running_statistics_move_with_momentum(momentum):
    x, fed = inputs(et, batches=5)
    model = net(et, momentum=momentum)
    explorer = TrainEvalExplorerModel(model, x, batches=fed)
    assert explorer.next_batch(5) == 5
    history = explorer.history["1"]
    assert [s.num_batches_tracked for s in history] == [0, 1, 2, 3, 4, 5]
    np.testing.assert_array_equal(history[-1].running_mean, model[1].running_mean.numpy())
    np.testing.assert_array_equal(history[-1].running_var, model[1].running_var.numpy())
    for previous, state in zip(history, history[1:]):
        factor = momentum if momentum is not None else 1 / state.num_batches_tracked
        assert state.factor == pytest.approx(factor)
        np.testing.assert_allclose(
            state.running_mean, (1 - factor) * previous.running_mean + factor * state.batch_mean,
            rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            state.running_var, (1 - factor) * previous.running_var + factor * state.batch_var,
            rtol=1e-5, atol=1e-6)
    if momentum is None:  # the cumulative average of the batch means, equally weighted
        np.testing.assert_allclose(history[-1].running_mean,
                                   np.mean([s.batch_mean for s in history[1:]], axis=0),
                                   rtol=1e-5, atol=1e-6)


def test_batches_cycle_and_default_to_x():
    x, fed = inputs(et, batches=2)
    explorer = TrainEvalExplorerModel(net(et, momentum=None), x, batches=[(b, 0) for b in fed])
    explorer.next_batch(3)
    means = [s.batch_mean for s in explorer.history["1"][1:]]
    np.testing.assert_array_equal(means[0], means[2])
    assert not np.array_equal(means[0], means[1])
    alone = TrainEvalExplorerModel(net(et, momentum=None), x)
    alone.next_batch()
    alone.compare()
    np.testing.assert_allclose(alone.history["1"][1].running_mean,
                               alone.batch_norm_call("1").batch_mean, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_same_running_statistics_as_real_torch(real_torch, momentum):
    """Real torch's BatchNorm is the oracle: feeding the same batches gives the same buffers."""
    x, fed = inputs(et)
    ours = TrainEvalExplorerModel(net(et, momentum=momentum), x, batches=fed)
    twin = net(real_torch, momentum=momentum)
    twin.load_state_dict({k: real_torch.tensor(v.detach().numpy())
                          for k, v in ours.module.state_dict().items()})
    theirs = TrainEvalExplorerModel(twin, real_torch.tensor(x.numpy()),
                                    batches=[real_torch.tensor(b.numpy()) for b in fed])
    ours.next_batch(4)
    theirs.next_batch(4)
    for a, b in zip(ours.history["1"], theirs.history["1"]):
        assert a.num_batches_tracked == b.num_batches_tracked and a.factor == b.factor
        np.testing.assert_allclose(a.running_mean, b.running_mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a.running_var, b.running_var, rtol=1e-5, atol=1e-6)
    assert [m.name for m in theirs.modal_modules()] == ["1", "3", "4"]
    a, b = ours.compare(), theirs.compare()
    np.testing.assert_allclose(a.eval_output, b.eval_output, rtol=1e-4, atol=1e-5)
    c = theirs.compare()
    assert c.eval_change == 0.0 and c.train_change > 0


# -- the view ----------------------------------------------------------------------------
def test_view_run_again_and_module_details():
    x, fed = inputs(et)
    view = TrainEvalExplorer(net(et), x, batches=fed)
    assert repr(view) == "TrainEvalExplorer(Sequential, 3 modal modules)"
    assert [value for _, value in view.module.options] == ["1", "3", "4"]
    assert is_png(png_bytes(view.image)) and is_png(png_bytes(view.detail_image))
    assert "call 1:" in view.change.value
    first = png_bytes(view.image)
    view.again_button.click()
    assert "train output <b>changed</b>" in view.change.value
    assert "eval output identical" in view.change.value
    assert png_bytes(view.image) != first
    view.module.value = "3"
    assert "Dropout(p=0.5) in train() zeroed" in view.text.value
    assert "1/(1 − p) = 2" in view.text.value
    view.module.value = "4"
    assert "Noisy fed the same input (8, 12)" in view.text.value
    assert "checks self.training itself" in view.text.value


def test_view_next_batch_and_step_slider():
    x, fed = inputs(et)
    model = net(et, momentum=None)
    view = TrainEvalExplorer(model, x, batches=fed)
    view.module.value = "1"
    assert "momentum = None (cumulative average" in view.text.value
    assert "press “next batch”" in view.text.value
    picture = png_bytes(view.detail_image)
    for _ in range(3):
        view.next_button.click()
    assert view.step.max == 3 and view.step.value == 3
    assert int(model[1].num_batches_tracked) == 3
    assert "num_batches_tracked = 3" in view.text.value and "(1 − 0.3333)" in view.text.value
    assert png_bytes(view.detail_image) != picture
    # the running statistics moved: the eval output is new, then stable again
    assert "call 4 with the running statistics of the last batch" in view.change.value
    view.again_button.click()
    assert "eval output identical" in view.change.value
    assert view.model.comparisons[-1].steps == 3
    latest = png_bytes(view.detail_image)
    view.step.value = 1
    assert "step 1 of 3: num_batches_tracked = 1" in view.text.value
    assert png_bytes(view.detail_image) != latest


def test_view_of_a_model_without_modal_modules():
    nn = et.nn
    x, _ = inputs(et)
    view = TrainEvalExplorer(nn.Sequential(nn.Linear(6, 2), nn.ReLU()), x)
    assert view.module.value is None
    assert "no module of this model behaves differently" in view.text.value
    view.next_button.click()  # nothing to track, nothing breaks
    assert is_png(png_bytes(view.detail_image))


def test_view_on_a_real_torch_module(real_torch):
    x, fed = inputs(real_torch)
    model = net(real_torch)
    view = TrainEvalExplorer(model, x, batches=fed)
    view.again_button.click()
    assert "eval output identical" in view.change.value
    view.module.value = "1"
    view.next_button.click()
    assert int(model[1].num_batches_tracked) == 1 and "num_batches_tracked = 1" in view.text.value
    view.module.value = "3"
    assert "zeroed" in view.text.value and is_png(png_bytes(view.detail_image))


def test_batch_norm_2d_and_dropout_2d_work_per_channel():
    nn = et.nn
    et.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.Dropout2d(0.5))
    x, fed = et.randn(6, 1, 8, 8), [et.randn(16, 1, 8, 8) * 3 + 1]
    explorer = TrainEvalExplorerModel(model, x, batches=fed)
    assert [(m.name, m.kind) for m in explorer.modal_modules()] == [
        ("1", "batchnorm"), ("2", "dropout")]
    explorer.next_batch()
    state = explorer.history["1"][1]
    seen = model[0](fed[0]).detach().numpy().astype(np.float64)
    np.testing.assert_allclose(state.batch_mean, seen.mean(axis=(0, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(state.running_mean, 0.1 * seen.mean(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-6)
    explorer.compare()
    zeroed = explorer.dropout_call("2").zeroed  # whole channels: all of a map or none of it
    per_map = zeroed.reshape(6, 4, -1).mean(axis=2)
    assert set(np.unique(per_map)) <= {0.0, 1.0} and 0 < per_map.mean() < 1


def test_the_other_kinds_of_module_are_drawn_ahead_while_the_controls_rest(monkeypatch):
    """In a kernel, once the controls rest, the details of a module of each other kind are
    drawn and kept, so the dropdown shows them without drawing; the picture a module then
    shows is the one a fresh explorer draws."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    def build():
        et.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Dropout(0.5), nn.Linear(5, 3))
        return TrainEvalExplorer(model, et.randn(4, 6), batches=[et.randn(8, 6) for _ in range(3)])

    view = asyncio.run(built_in_a_kernel(build, lambda view: not view.ahead.pending))
    assert view.module.value == "1"  # the BatchNorm1d; the Dropout's frame is ready
    assert view.details["dropout"].canvas.backgrounds

    def no_drawing(*args):
        raise AssertionError("drawn again")
    monkeypatch.setattr(view.details["dropout"].canvas, "png", no_drawing)
    view.module.value = "2"
    fresh = build()
    fresh.module.value = "2"
    assert bytes(view.detail_image.value) == bytes(fresh.detail_image.value)


def _dropout_explorer():
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Dropout(0.5), nn.Linear(5, 3))
    view = TrainEvalExplorer(model, et.randn(4, 6), batches=[et.randn(8, 6) for _ in range(3)])
    view.module.value = "2"  # the Dropout: its mask changes with every run
    return view


def _shown(view):
    return (bytes(view.image.value), bytes(view.detail_image.value), view.change.value,
            view.text.value)


def test_the_next_run_prepared_ahead_is_shown_without_drawing(monkeypatch):
    """Once the controls rest, the next "run again" is computed and drawn: the click shows
    it without drawing, exactly what a fresh explorer shows after the same click."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    view = asyncio.run(built_in_a_kernel(_dropout_explorer, lambda view: not view.ahead.pending))

    def no_drawing(*args):
        raise AssertionError("drawn again")
    monkeypatch.setattr(view.output_canvas, "png", no_drawing)
    monkeypatch.setattr(view.details["dropout"].canvas, "png", no_drawing)
    view.again_button.click()
    fresh = _dropout_explorer()
    fresh.again_button.click()
    assert _shown(view) == _shown(fresh)


def test_a_run_prepared_ahead_changes_nothing_when_it_is_not_used():
    """A batch fed (or the model changed in place) after a run was prepared: the prepared
    run is dropped and the explorer's generator was put back, so every later picture is
    what an explorer that never prepared anything shows."""
    view, fresh = _dropout_explorer(), _dropout_explorer()
    view._prepare_again()
    _click_both(view, fresh, "next_button")
    assert _shown(view) == _shown(fresh)
    view._prepare_again()
    _click_both(view, fresh, "again_button", weights_changed=True)
    assert _shown(view) == _shown(fresh)


def _click_both(view, fresh, button, weights_changed=False):
    """Click ``button`` on both explorers (first doubling, in place, their first weights)."""
    for explorer in (view, fresh):
        if weights_changed:
            with et.no_grad():
                explorer.model.module[0].weight.mul_(2.0)
        getattr(explorer, button).click()


def test_no_run_is_prepared_ahead_when_a_comparison_is_slow(monkeypatch):
    """A big model's comparison takes long: a click would wait for one prepared ahead, so
    none is (the other kinds' frames still are)."""
    import asyncio

    import widgets.train_eval_explorer_view as view_module
    from widget_helpers import built_in_a_kernel

    monkeypatch.setattr(view_module, "AHEAD_MAX_SECONDS", 0.0)
    view = asyncio.run(built_in_a_kernel(_dropout_explorer, lambda view: not view.ahead.pending))
    assert view.model._ahead is None and view.details["batchnorm"].canvas.backgrounds


def _explorer_showing(module):
    """``_dropout_explorer``'s model with ``module`` shown ("1": the BatchNorm1d; "2": the
    Dropout), fed batches ever larger: the BatchNorm pictures' axis ranges grow with each."""
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Dropout(0.5), nn.Linear(5, 3))
    view = TrainEvalExplorer(model, et.randn(4, 6),
                             batches=[et.randn(8, 6) * scale + scale for scale in (3, 10, 30)])
    view.module.value = module
    return view


def _state(view):
    """Everything a click can change in the model, as comparable values."""
    m = view.model
    history = {name: [(s.step, s.running_mean.tobytes(), s.running_var.tobytes(),
                       s.num_batches_tracked) for s in states]
               for name, states in m.history.items()}
    return ({n: b.tobytes() for n, b in buffers(m.module).items()}, m.steps, history,
            bytes(m._rng_state.numpy()),
            len(m.comparisons), view.step.max, view.step.value)


@pytest.mark.parametrize("module", ["1", "2"])
def test_the_next_batch_prepared_ahead_is_shown_without_drawing(monkeypatch, module):
    """Once the controls rest, the next "next batch" is computed and drawn in the state it
    leaves, which is then put back: the click shows it without drawing, and the explorer is
    left exactly as one that never prepared anything (pictures, buffers, history, generator)."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    view = asyncio.run(built_in_a_kernel(lambda: _explorer_showing(module),
                                         lambda view: not view.ahead.pending))
    fresh = _explorer_showing(module)
    assert _state(view) == _state(fresh)  # preparing changed nothing

    def no_drawing(*args):
        raise AssertionError("drawn again")
    for canvas in (view.output_canvas, view.details["batchnorm"].canvas,
                   view.details["dropout"].canvas):
        monkeypatch.setattr(canvas, "png", no_drawing)
    _click_both(view, fresh, "next_button")
    assert _shown(view) == _shown(fresh) and _state(view) == _state(fresh)
    monkeypatch.undo()
    for button in ("again_button", "next_button", "next_button", "again_button"):
        _click_both(view, fresh, button)
        assert _shown(view) == _shown(fresh) and _state(view) == _state(fresh)
    view.step.value = fresh.step.value = 1  # the BatchNorm's ranges: those of the batches fed
    assert _shown(view) == _shown(fresh)


@pytest.mark.parametrize("module", ["1", "2"])
def test_a_batch_prepared_ahead_changes_nothing_when_it_is_not_used(module):
    """Both clicks prepared, then "run again" (or the model changed in place): the prepared
    batch is not used, but the batch it took from ``batches`` is the next one fed, and the
    BatchNorm's axis ranges are those of the batches really fed."""
    view, fresh = _explorer_showing(module), _explorer_showing(module)
    _click_both(view, fresh, "next_button")
    for prepare in (view._prepare_again, view._prepare_next_batch):
        prepare()
    _click_both(view, fresh, "again_button")
    assert _shown(view) == _shown(fresh) and _state(view) == _state(fresh)
    view.step.value = fresh.step.value = 0  # drawn with the ranges of the batch fed
    assert _shown(view) == _shown(fresh)
    view._prepare_next_batch()
    _click_both(view, fresh, "next_button", weights_changed=True)
    assert _shown(view) == _shown(fresh) and _state(view) == _state(fresh)


def test_what_was_prepared_is_not_computed_again_while_nothing_changed(monkeypatch):
    """The controls rest again (a step or a module picked) while nothing changed: the next
    run and the next batch prepared before are kept, with their pictures."""
    view = _explorer_showing("1")
    view._prepare_again()
    view._prepare_next_batch()

    def no_computing(*args):
        raise AssertionError("computed again")
    monkeypatch.setattr(view.model, "_compare", no_computing)
    monkeypatch.setattr(view.model, "_feed", no_computing)
    for canvas in (view.output_canvas, view.details["batchnorm"].canvas):
        monkeypatch.setattr(canvas, "png", no_computing)
    view._prepare_again()
    view._prepare_next_batch()


def test_no_batch_is_taken_early_from_a_loader_that_shuffles_with_the_global_generator():
    """A DataLoader that shuffles without its own generator draws from the global one when
    an epoch starts: taking its next batch early would move those draws, so it is not done."""
    from edutorch.utils.data import DataLoader, TensorDataset

    x, fed = inputs(et)
    data = TensorDataset(et.cat(fed))
    own = et.Generator().manual_seed(0)
    assert TrainEvalExplorerModel(net(et), x, batches=fed).can_prepare_batches
    assert TrainEvalExplorerModel(net(et), x, batches=DataLoader(
        data, batch_size=16, shuffle=True, generator=own)).can_prepare_batches
    import asyncio

    from widget_helpers import built_in_a_kernel

    def build():
        return TrainEvalExplorer(net(et), x, batches=DataLoader(data, batch_size=16,
                                                                 shuffle=True))
    view = asyncio.run(built_in_a_kernel(build, lambda view: not view.ahead.pending))
    assert not view.model.can_prepare_batches
    assert view.model._ahead is not None  # the next run was prepared, no batch was taken
    assert view.model._batch_ahead is None and not view.model._peeked


def test_the_click_just_made_is_prepared_first():
    """While the controls rest, the click just made is prepared first (a person clicking
    "next batch" clicks it again more often than "run again"), then the other one."""
    view = _explorer_showing("1")
    scheduled = []
    view.ahead.schedule = lambda tasks: scheduled.append(list(tasks))
    view.next_button.click()
    assert scheduled[-1][:2] == [view._prepare_next_batch, view._prepare_again]
    view.again_button.click()
    assert scheduled[-1][:2] == [view._prepare_again, view._prepare_next_batch]


@pytest.mark.parametrize("button", ["again_button", "next_button"])
@pytest.mark.parametrize("module", ["1", "2"])
def test_a_click_sends_its_pictures_first_and_the_step_slider_in_one_message(monkeypatch,
                                                                              button, module):
    """What leaves the kernel on a click, in order: the pictures (a person waits for them),
    then the texts, and after "next batch" the step slider's new range and value together."""
    import ipywidgets as W

    view = _explorer_showing(module)
    names = {id(widget): name for name, widget in vars(view).items()
             if isinstance(widget, W.Widget)}
    sent = []
    send = W.Widget._send

    def recorded(widget, msg, buffers=None):
        if id(widget) in names and msg.get("method") == "update":
            sent.append((names[id(widget)], sorted(msg["state"]), bool(buffers)))
        return send(widget, msg, buffers)

    monkeypatch.setattr(W.Widget, "_send", recorded)
    for _ in range(2):
        sent.clear()
        getattr(view, button).click()
        pictures = [name for name, _, picture in sent if picture]
        assert pictures and [name for name, _, _ in sent[:len(pictures)]] == pictures
        assert "change" in {name for name, _, _ in sent[len(pictures):]}
    if module == "2" or button == "next_button":  # the Dropout's masks, the BatchNorm's step
        assert {name for name, _, _ in sent[len(pictures):]} >= {"change", "text"}
    if button == "next_button":
        assert pictures == ["image", "detail_image"]
        assert [keys for name, keys, _ in sent if name == "step"] == [["max", "value"]]


def test_the_step_sliders_neighbours_are_drawn_ahead_while_the_controls_rest(monkeypatch):
    """A BatchNorm shown at step 1 of 2: once the controls rest, its details at steps 0 and 2
    (an arrow key either way) are drawn and kept; moving the slider draws nothing and shows
    what a fresh explorer draws at that step, and the explorer's state is unchanged."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    def build():
        view = _explorer_showing("1")
        for _ in range(2):
            view.next_button.click()
        view.step.value = 1
        return view

    view = asyncio.run(built_in_a_kernel(build, lambda view: not view.ahead.pending))
    fresh = build()
    assert _state(view) == _state(fresh)

    def no_drawing(*args):
        raise AssertionError("drawn again")
    monkeypatch.setattr(view.details["batchnorm"].canvas, "png", no_drawing)
    for step in (2, 0):
        view.step.value = fresh.step.value = step
        assert _shown(view) == _shown(fresh) and _state(view) == _state(fresh)


def test_the_timeline_legend_hides_no_line_or_dot():
    """The running_mean timeline keeps room below its values for its legend (lower right):
    no point of a channel's line or batch dots lies under it (lesson 06's dots once did)."""
    x, fed = inputs(et, n=12, batches=5)
    view = TrainEvalExplorer(net(et), x, batches=fed)
    view.module.value = "1"
    for _ in range(5):
        view.next_button.click()
    details = view.details["batchnorm"]
    details.canvas.png()
    ax = details.axes[2]
    box = ax.get_legend().get_window_extent(details.canvas.figure.canvas.get_renderer())
    drawn = [artist for artist in (*details.lines, *details.batch_dots) if len(artist.get_xdata())]
    assert drawn
    for artist in drawn:
        points = ax.transData.transform(np.column_stack(artist.get_data()))
        under = ((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                 & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1))
        assert not under.any(), points[under][:3]
