"""PruneExplorerModel (pure Python) and the PruneExplorer view, driven headlessly."""
import copy

import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
import edutorch.nn.functional as F
import edutorch.nn.utils.prune as prune
from widgets import GLOBAL, PruneExplorer, PruneExplorerModel
from widgets import prune_explorer
from widgets.prune_explorer import METHODS
from widget_helpers import built_in_a_kernel, copy_weights, is_png, mlp, png_bytes

LAYERS = ["0.weight", "2.weight", "4.weight"]


def weights(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def test_layers_and_choices(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    assert explorer.layers() == LAYERS
    assert explorer.choices() == LAYERS + [GLOBAL]
    with pytest.raises(KeyError, match="unknown layer 'nope'"):
        explorer.set(layer="nope")
    with pytest.raises(ValueError, match="unknown method 'l3'"):
        explorer.set(method="l3")


def test_preview_leaves_the_model_untouched(small_mlp):
    before = weights(small_mlp)
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="0.weight", amount=0.5)
    preview = explorer.preview()
    assert preview.sparsity["0.weight"] == pytest.approx(0.5)
    assert preview.pruned_names == ["0.weight_orig", "0.weight_mask"]
    assert list(weights(small_mlp)) == list(before)
    for key, value in weights(small_mlp).items():
        np.testing.assert_array_equal(value, before[key])
    assert explorer.current().pruned_names == [] and not prune.is_pruned(small_mlp)


def test_preview_mask_is_the_one_prune_computes(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="2.weight", method="l1_unstructured", amount=0.3)
    reference = copy.deepcopy(small_mlp)
    prune.l1_unstructured(reference[2], "weight", amount=0.3)
    np.testing.assert_array_equal(explorer.preview().masks["2.weight"],
                                  reference[2].weight_mask.numpy())
    assert explorer.preview().masks["0.weight"].min() == 1.0  # other layers: all kept


def test_structured_preview_prunes_whole_rows(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="0.weight", method="ln_structured", n=2, dim=0, amount=0.25)
    mask = explorer.preview().masks["0.weight"]
    row_kept = mask.max(axis=1)
    assert set(np.unique(mask.min(axis=1) == row_kept)) == {True}  # rows all 0 or all 1
    assert int((row_kept == 0).sum()) == 4  # round(0.25 * 16)
    norms = np.linalg.norm(small_mlp[0].weight.detach().numpy(), axis=1)
    assert set(np.argsort(norms)[:4]) == set(np.flatnonzero(row_kept == 0))
    explorer.set(method="random_structured", dim=1)
    mask = explorer.preview().masks["0.weight"]
    assert int((mask.max(axis=0) == 0).sum()) == 5  # round(0.25 * 20) columns


def test_random_preview_matches_apply_and_spares_the_users_rng(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="0.weight", method="random_unstructured", amount=0.4)
    et.manual_seed(123)
    preview = explorer.preview()
    applied = explorer.apply()
    after = et.rand(3).numpy()
    et.manual_seed(123)
    np.testing.assert_array_equal(after, et.rand(3).numpy())  # explorer used its own stream
    np.testing.assert_array_equal(preview.masks["0.weight"], applied.masks["0.weight"])


def test_apply_is_iterative_and_undo_restores(small_mlp):
    before = weights(small_mlp)
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="0.weight", amount=0.5)
    first = explorer.apply()
    assert first.pruned_names == ["0.weight_orig", "0.weight_mask"]
    assert first.sparsity["0.weight"] == pytest.approx(0.5)
    assert list(small_mlp.state_dict()) == [
        "0.bias", "0.weight_orig", "0.weight_mask", "2.weight", "2.bias", "4.weight", "4.bias"]
    second = explorer.apply()  # half of what is left: PruningContainer
    assert second.sparsity["0.weight"] == pytest.approx(0.75)
    assert type(small_mlp[0]._forward_pre_hooks[next(iter(small_mlp[0]._forward_pre_hooks))]
                ).__name__ == "PruningContainer"
    assert len(explorer.undo_stack) == 2
    explorer.undo()
    np.testing.assert_array_equal(small_mlp[0].weight_mask.numpy(), first.masks["0.weight"])
    explorer.undo()
    assert explorer.current().pruned_names == [] and not prune.is_pruned(small_mlp)
    assert list(small_mlp.state_dict()) == list(before)
    for key, value in weights(small_mlp).items():
        np.testing.assert_array_equal(value, before[key])
    with pytest.raises(IndexError, match="nothing to undo"):
        explorer.undo()


def test_undo_keeps_the_parameter_object(small_mlp):
    weight = small_mlp[0].weight
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="0.weight", amount=0.5)
    explorer.apply()
    assert small_mlp[0].weight_orig is weight  # prune moves the Parameter, does not copy it
    explorer.undo()
    assert small_mlp[0].weight is weight  # so an optimizer built earlier still holds it


def test_make_permanent_and_undo_it(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer=GLOBAL, amount=0.6)
    pruned = explorer.apply()
    assert pruned.global_sparsity == pytest.approx(0.6, abs=1e-3)
    assert sorted(pruned.pruned_names) == sorted(
        [f"{n}_orig" for n in LAYERS] + [f"{n}_mask" for n in LAYERS])
    permanent = explorer.make_permanent()
    assert permanent.pruned_names == [] and not prune.is_pruned(small_mlp)
    assert permanent.sparsity == pruned.sparsity
    # like torch's prune.remove: the new plain ``weight`` is registered after ``bias``
    assert list(small_mlp.state_dict()) == [
        "0.bias", "0.weight", "2.bias", "2.weight", "4.bias", "4.weight"]
    back = explorer.undo()
    assert sorted(back.pruned_names) == sorted(pruned.pruned_names)
    for name in LAYERS:
        np.testing.assert_array_equal(back.masks[name], pruned.masks[name])


def test_global_pruning_needs_an_unstructured_method(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer=GLOBAL, method="ln_structured")
    with pytest.raises(ValueError, match="needs an unstructured method"):
        explorer.preview()
    with pytest.raises(ValueError, match="needs an unstructured method"):
        explorer.apply()
    assert explorer.undo_stack == []  # a failed apply leaves nothing to undo


def test_loss_and_accuracy_match_cross_entropy(small_mlp, eval_batch):
    x, y = eval_batch
    explorer = PruneExplorerModel(small_mlp, data=eval_batch)
    now = explorer.current()
    with et.no_grad():
        logits = small_mlp(x)
        expected = F.cross_entropy(logits, y).item()
    accuracy = float((logits.numpy().argmax(1) == y.numpy()).mean())
    assert now.loss == pytest.approx(expected, rel=1e-5)
    assert now.accuracy == pytest.approx(accuracy)


def test_curve_over_the_grid_is_cached(small_mlp, eval_batch):
    explorer = PruneExplorerModel(small_mlp, data=eval_batch, grid=(0.0, 0.5, 0.9))
    explorer.set(layer="2.weight")
    points = explorer.curve()
    assert [p[0] for p in points] == [0.0, 0.5, 0.9]
    assert [p[1] for p in points] == pytest.approx([0.0, 0.5, 0.9], abs=1e-2)
    assert points[0][2] == pytest.approx(explorer.current().loss)
    assert explorer.curve() is points
    explorer.set(amount=0.3)
    assert explorer.curve() is points  # the amount is not part of the curve
    explorer.set(method="random_unstructured")
    assert explorer.curve() is not points


def test_regression_data_gives_mse_and_no_accuracy(small_mlp):
    x = et.randn(8, 20)
    target = et.randn(8, 4)
    explorer = PruneExplorerModel(small_mlp, data=(x, target))
    with et.no_grad():
        expected = ((small_mlp(x) - target) ** 2).mean().item()
    assert explorer.current().loss == pytest.approx(expected, rel=1e-5)
    assert explorer.current().accuracy is None


def test_same_masks_and_loss_as_real_torch(small_mlp, eval_batch, real_torch):
    twin = copy_weights(real_torch, small_mlp, mlp(real_torch.nn))
    x, y = eval_batch
    data = (real_torch.tensor(x.numpy()), real_torch.tensor(y.numpy()))
    ours, theirs = PruneExplorerModel(small_mlp, eval_batch), PruneExplorerModel(twin, data)
    for explorer in (ours, theirs):
        explorer.set(layer=GLOBAL, method="l1_unstructured", amount=0.7)
    a, b = ours.apply(), theirs.apply()
    assert a.pruned_names == b.pruned_names
    for name in LAYERS:
        np.testing.assert_array_equal(a.masks[name], b.masks[name])
    assert a.loss == pytest.approx(b.loss, rel=1e-5) and a.accuracy == b.accuracy


# -- the view ----------------------------------------------------------------------------
def test_view_slider_previews_without_pruning(small_mlp, eval_batch):
    view = PruneExplorer(small_mlp, data=eval_batch)
    assert repr(view) == "PruneExplorer(Sequential, 3 weights)"
    assert view.layer.value == "0.weight" and view.method.value == "l1_unstructured"
    assert view.n.disabled and view.dim.disabled
    first = png_bytes(view.image)
    assert is_png(first)
    view.amount.value = 0.8
    assert view.model.settings.amount == 0.8
    assert png_bytes(view.image) != first
    assert "80.0%" in view.table.value  # the preview column
    assert "nothing pruned yet" in view.table.value
    assert not prune.is_pruned(small_mlp)
    assert "accuracy" in view.table.value and "→" in view.table.value


def test_view_apply_undo_and_make_permanent(small_mlp, eval_batch):
    view = PruneExplorer(small_mlp, data=eval_batch)
    view.amount.value = 0.5
    view.apply_button.click()
    assert "undo steps: 1" in view.title.value and "global sparsity" in view.title.value
    assert "0.weight_orig, 0.weight_mask" in view.table.value
    view.method.value = "ln_structured"
    assert not view.n.disabled and not view.dim.disabled
    assert list(view.dim.options) == [0, 1]
    view.apply_button.click()
    assert small_mlp[0].weight_mask.numpy().mean() < 0.5
    view.permanent_button.click()
    assert not prune.is_pruned(small_mlp) and "undo steps: 3" in view.title.value
    for _ in range(3):
        view.undo_button.click()
    assert not prune.is_pruned(small_mlp) and "undo steps: 0" in view.title.value
    view.undo_button.click()  # nothing left: a message, not an exception
    assert "IndexError: nothing to undo" in view.table.value


def test_view_global_mode_and_bad_settings(small_mlp):
    view = PruneExplorer(small_mlp)  # no data: no curve
    view.layer.value = GLOBAL
    assert view.model.settings.layer == GLOBAL
    assert is_png(view.image.value)
    view.method.value = "random_structured"
    assert "needs an unstructured method" in view.table.value
    view.apply_button.click()
    assert not prune.is_pruned(small_mlp)
    view.method.value = "l1_unstructured"
    assert "needs an unstructured method" not in view.table.value
    view.amount.value = 0.3
    assert "30.0%" in view.table.value


def test_view_on_the_784_mlp():
    et.manual_seed(0)
    model = mlp(nn, (784, 256, 128, 10))
    x, y = et.randn(64, 784), et.randint(0, 10, (64,))
    view = PruneExplorer(model, data=(x, y))
    pictures = set()
    for amount in (0.2, 0.4, 0.6):
        view.amount.value = amount
        pictures.add(png_bytes(view.image))
    assert len(pictures) == 3
    view.apply_button.click()
    assert view.model.current().sparsity["0.weight"] == pytest.approx(0.6, abs=1e-5)


def test_evaluation_restores_each_modules_mode(eval_batch):
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 8), nn.Dropout(0.5), nn.Linear(8, 4))
    model[1].eval()  # a mixed state: the root trains, the dropout does not
    explorer = PruneExplorerModel(model, data=eval_batch)
    first = explorer.current().loss
    assert [m.training for m in model.modules()] == [True, True, False, True]
    assert explorer.evaluate()[0] == pytest.approx(first)  # eval mode: dropout is off


# -- big models: memory and sharing --------------------------------------------------------
def test_masks_are_bool_and_unpruned_ones_take_no_memory(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="2.weight", amount=0.5)
    preview = explorer.preview()
    assert all(m.dtype == np.bool_ for m in preview.masks.values())
    for name in ("0.weight", "4.weight"):  # untouched by this preview
        assert preview.masks[name].all() and preview.masks[name].strides == (0, 0)
    assert preview.nbytes == preview.masks["2.weight"].nbytes == 16 * 8


def test_preview_copy_shares_every_tensor_with_the_model(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer="0.weight", amount=0.3)
    explorer.apply()  # 0.weight is now weight_orig + weight_mask + a plain weight attribute
    trial = explorer._trial_copy()
    assert trial is not small_mlp and trial[0] is not small_mlp[0]
    assert trial[0].weight_orig is small_mlp[0].weight_orig
    assert trial[0].weight_mask is small_mlp[0].weight_mask
    assert trial[0].weight is small_mlp[0].weight and trial[2].bias is small_mlp[2].bias
    prune.l1_unstructured(trial[2], "weight", amount=0.5)  # what a preview does to the copy
    assert not prune.is_pruned(small_mlp[2]) and "weight" in dict(small_mlp[2].named_parameters())


def test_preview_cache_stays_within_its_byte_budget(small_mlp):
    mask_bytes = 16 * 20  # one bool mask of 0.weight
    explorer = PruneExplorerModel(small_mlp, preview_bytes=3 * mask_bytes)
    explorer.set(layer="0.weight")
    amounts = [0.05 * k for k in range(1, 12)]
    for amount in amounts:
        explorer.preview(amount)
        assert sum(r.nbytes for r in explorer._preview_cache.values()) <= 3 * mask_bytes
    assert len(explorer._preview_cache) == 3
    kept = [key[0].amount for key in explorer._preview_cache]
    assert kept == pytest.approx(amounts[-3:])  # the most recent ones
    explorer.preview(amounts[-3])  # a hit moves it to the end (least recently used last)
    assert next(reversed(explorer._preview_cache))[0].amount == pytest.approx(amounts[-3])
    default = PruneExplorerModel(small_mlp)
    assert default.preview_bytes == sum(p.numel() * 4 for p in small_mlp.parameters())


def test_undo_of_apply_keeps_no_copy_of_the_values(small_mlp):
    explorer = PruneExplorerModel(small_mlp)
    explorer.set(layer=GLOBAL, amount=0.5)
    explorer.apply()
    assert all(original is None for _, original, _, _ in explorer.undo_stack[0][1])
    explorer.apply()
    assert all(mask is None or mask.dtype == np.bool_ for _, _, mask, _ in explorer.undo_stack[1][1])
    explorer.make_permanent()  # remove() overwrites weight_orig: this snapshot keeps values
    assert all(original is not None for _, original, _, _ in explorer.undo_stack[2][1])


def test_undo_gives_the_model_back_its_version_and_its_curves(small_mlp):
    """A state of the real model has one version: after apply then undo, the curve of the
    state before is the one computed then (not computed again), and a new apply gets a
    version never used before."""
    explorer = PruneExplorerModel(small_mlp, data=(et.randn(16, 20), et.randint(0, 4, (16,))))
    explorer.set(layer="0.weight", amount=0.5)
    before, curve = explorer.version, explorer.curve()
    explorer.apply()
    pruned = explorer.version
    assert pruned != before and explorer.curve() != curve
    explorer.undo()
    assert explorer.version == before and explorer.curve() is curve
    explorer.set(amount=0.25)
    explorer.apply()
    assert explorer.version not in (before, pruned)
    explorer.refresh()  # changed outside the explorer: nothing cached is trusted
    assert explorer.curve() is not curve


def test_curves_computed_ahead_one_point_at_a_time(monkeypatch, small_mlp):
    """``curve_tasks()``: every other method on the chosen weights and the chosen method on
    every other choice, one point per task; once they ran, those curves cost nothing, equal
    what ``curve`` computes, and a task planned before the model changed does nothing."""
    monkeypatch.setattr(prune_explorer, "AHEAD_PREVIEW_S", float("inf"))  # however busy the CPU
    explorer = PruneExplorerModel(small_mlp, data=(et.randn(16, 20), et.randint(0, 4, (16,))))
    explorer.set(layer="2.weight")
    tasks = explorer.curve_tasks()
    wanted = len(METHODS) + len(explorer.choices())
    assert len(tasks) == wanted * len(explorer.grid)
    for task in tasks:
        task()
    fresh = PruneExplorerModel(copy.deepcopy(small_mlp), data=explorer.data)
    for method in ("l1_unstructured", "ln_structured"):
        explorer.set(method=method)
        fresh.set(layer="2.weight", method=method)
        previews = len(explorer._preview_cache)
        assert explorer.curve() == fresh.curve()
        assert len(explorer._preview_cache) == previews  # every point was there already
    stale = explorer.curve_tasks()[0]
    explorer.set(method="ln_structured")
    explorer.apply()
    points = len(explorer._points)
    stale()
    assert len(explorer._points) == points


def test_slow_actions_say_what_is_running_before_they_run():
    """On a big model a preview or an apply takes a while: the caption says so first (the
    kernel sends a widget's change at once), then shows the result."""
    et.manual_seed(0)
    view = PruneExplorer(nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4)))
    seen = []
    view.caption.observe(lambda change: seen.append(change["new"]), names="value")
    view.amount.value = 0.25
    assert "computing the preview (L1 unstructured at 0.25)…" in seen[0]
    assert "preview</b> at amount 0.25" in view.caption.value
    seen.clear()
    view.amount.value = 0.5  # remembered: nothing to wait for
    assert not any("computing" in text for text in seen)
    view.apply_button.click()
    assert "changing the model…" in seen[-2] and "the model now" in view.caption.value


def test_the_view_computes_the_next_curves_while_its_controls_rest(monkeypatch, small_mlp):
    """In a kernel, once the controls rest, every curve a dropdown may ask for next is
    computed: picking another method then draws without pruning a single copy."""
    import asyncio

    monkeypatch.setattr(prune_explorer, "AHEAD_PREVIEW_S", float("inf"))  # however busy the CPU

    data = (et.randn(16, 20), et.randint(0, 4, (16,)))
    view = asyncio.run(built_in_a_kernel(lambda: PruneExplorer(small_mlp, data=data),
                                         lambda view: not view.ahead.pending))
    points = len(view.model._points)
    view.layer.value = "4.weight"  # the same method on other weights
    assert "4.weight" in view.caption.value and is_png(png_bytes(view.image))
    view.layer.value = "0.weight"
    view.method.value = "ln_structured"  # another method on the same weights
    assert "Ln structured" in view.caption.value
    assert len(view.model._points) == points


def test_no_curve_is_computed_ahead_when_a_preview_is_slow(small_mlp):
    """On a big model one curve point takes long: nothing is planned ahead then."""
    explorer = PruneExplorerModel(small_mlp, data=(et.randn(16, 20), et.randint(0, 4, (16,))))
    explorer.curve()
    assert explorer.curve_tasks()
    explorer.preview_seconds = 1.0  # as if the last preview had taken a second
    assert explorer.curve_tasks() == []


# -- rendering ahead: what the next input shows (issue 25) ----------------------------------
def _state(model):
    """Everything about a model that pruning can change: names in order and exact values."""
    return ([(name, value.detach().numpy().copy()) for name, value in model.state_dict().items()],
            [name for name, _ in model.named_parameters()],
            [name for name, _ in model.named_buffers()])


def _assert_same_state(a, b):
    (values_a, params_a, buffers_a), (values_b, params_b, buffers_b) = _state(a), _state(b)
    assert [n for n, _ in values_a] == [n for n, _ in values_b]
    assert (params_a, buffers_a) == (params_b, buffers_b)
    for (_, x), (_, y) in zip(values_a, values_b):
        np.testing.assert_array_equal(x, y)


def _shown(view):
    return png_bytes(view.image), view.caption.value, view.table.value, view.title.value


@pytest.mark.parametrize("method", ["l1_unstructured", "random_unstructured"])
def test_applied_curve_computed_ahead_is_the_one_apply_computes(monkeypatch, small_mlp, method):
    """``applied_tasks()`` computes the pruned model's curve on the preview's copy; ``apply()``
    takes it over: the model changes exactly as without it, and the curve is the one a
    twin explorer computes after its own apply (no copy pruned for it afterwards)."""
    monkeypatch.setattr(prune_explorer, "AHEAD_PREVIEW_S", float("inf"))
    data = (et.randn(16, 20), et.randint(0, 4, (16,)))
    twin_model = copy.deepcopy(small_mlp)
    ahead, twin = PruneExplorerModel(small_mlp, data=data), PruneExplorerModel(twin_model, data=data)
    for explorer in (ahead, twin):
        explorer.set(layer="2.weight", method=method, amount=0.4)
        explorer.apply()  # the second apply combines masks in a PruningContainer
    users_rng = et.get_rng_state().numpy().copy()
    tasks = ahead.applied_tasks()
    assert len(tasks) == len(ahead.grid) and ahead.applied() is None
    for task in tasks:
        task()
    outcome, curve = ahead.applied()
    np.testing.assert_array_equal(et.get_rng_state().numpy(), users_rng)
    _assert_same_state(small_mlp, twin_model)  # computing ahead changed nothing
    previews = len(ahead._preview_cache)
    now, theirs = ahead.apply(), twin.apply()
    _assert_same_state(small_mlp, twin_model)
    assert ahead.curve() == twin.curve() == curve
    assert len(ahead._preview_cache) == previews  # the curve was not computed again
    assert now.loss == theirs.loss == outcome.loss and now.pruned_names == outcome.pruned_names
    np.testing.assert_array_equal(now.masks["2.weight"], outcome.masks["2.weight"])
    ahead.set(amount=0.2)  # other settings: what was computed ahead is not used
    assert ahead.applied() is None


def test_undone_gives_the_state_undo_goes_back_to(small_mlp, eval_batch):
    explorer = PruneExplorerModel(small_mlp, data=eval_batch)
    assert explorer.undone() is None  # nothing to undo
    explorer.set(layer="0.weight", amount=0.5)
    before, curve = explorer.current(), explorer.curve()
    explorer.apply()
    version, outcome, remembered = explorer.undone()
    assert outcome is before and remembered is curve
    explorer.undo()
    assert explorer.version == version and explorer.current().loss == before.loss


async def _rested(view):
    """Let the event loop run until the view has rendered ahead everything it planned."""
    import asyncio

    await asyncio.sleep(0)
    while view.ahead.pending or view.ahead.timer is not None:
        await asyncio.sleep(0.01)


def test_pictures_rendered_ahead_equal_fresh_ones_and_leave_model_and_rng_alone(monkeypatch,
                                                                                small_mlp):
    """In a kernel, each input of lesson 04's browser benchmark (an arrow key, the next
    weights, the next method, apply twice, undo twice) shows a picture rendered ahead while
    the controls rested (nothing drawn on the input), equal to what a twin view that renders
    nothing ahead draws, text included; the models change exactly alike, and rendering ahead
    touches neither the model, nor the user's generator, nor the controls."""
    import asyncio

    monkeypatch.setattr(prune_explorer, "AHEAD_PREVIEW_S", float("inf"))  # however busy the CPU
    data = (et.randn(16, 20), et.randint(0, 4, (16,)))
    twin_model = copy.deepcopy(small_mlp)
    twin = PruneExplorer(twin_model, data=data)  # built outside a loop: nothing ahead
    inputs = [lambda v: setattr(v.amount, "value", 0.55), lambda v: setattr(v.amount, "value", 0.5),
              lambda v: setattr(v.layer, "value", "2.weight"),
              lambda v: setattr(v.method, "value", "random_unstructured"),
              lambda v: v.apply_button.click(), lambda v: v.apply_button.click(),
              lambda v: v.undo_button.click(), lambda v: v.undo_button.click()]

    def untouched_by_rendering_ahead(view):
        """What rendering ahead must leave as it is (compared before and after it ran)."""
        values, params, buffers = _state(view.model.module)
        return ([(name, value.tolist()) for name, value in values], params, buffers,
                et.get_rng_state().numpy().tolist(), np.asarray(view.model._rng_state).tolist(),
                view.model.settings, view.model.version, len(view.model.undo_stack),
                (view.amount.value, view.layer.value, view.method.value), _shown(view))

    async def drive():
        view = PruneExplorer(small_mlp, data=data)
        drawn = []
        monkeypatch.setattr(view, "_render", lambda *a, **k: drawn.append(a) or
                            PruneExplorer._render(view, *a, **k))
        for act in inputs:
            before = untouched_by_rendering_ahead(view)
            await _rested(view)
            after = untouched_by_rendering_ahead(view)
            assert after == before  # exact: the values as Python floats
            drawn.clear()
            act(view)
            act(twin)
            assert drawn == []  # the picture was kept: rendered ahead
            assert _shown(view) == _shown(twin)
            _assert_same_state(small_mlp, twin_model)  # apply and undo: the same change
        return view

    asyncio.run(drive())
