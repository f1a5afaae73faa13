"""ParameterTreeModel (pure Python) and the ParameterTree view, driven headlessly."""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
import edutorch.nn.utils.prune as prune
from widgets import ParameterTree, ParameterTreeModel
from widgets.parameter_tree_view import DERIVED_COLOR, ORIGINAL_COLOR

from widget_helpers import is_png, mlp, png_bytes


def nested_model(nn_module, framework):
    """Sequential(Linear, BatchNorm1d(+ non-persistent buffer), ReLU, Sequential(Linear))."""
    model = nn_module.Sequential(nn_module.Linear(4, 3), nn_module.BatchNorm1d(3),
                                 nn_module.ReLU(), nn_module.Sequential(nn_module.Linear(3, 2)))
    model[1].register_buffer("scratch", framework.zeros(2), persistent=False)
    return model


@pytest.fixture
def model():
    et.manual_seed(0)
    return nested_model(nn, et)


def test_rows_follow_named_modules_with_own_tensors(model):
    rows = ParameterTreeModel(model).rows()
    assert [r.name for r in rows] == ["", "0", "1", "2", "3", "3.0"]
    assert [r.class_name for r in rows] == [
        "Sequential", "Linear", "BatchNorm1d", "ReLU", "Sequential", "Linear"]
    assert [r.depth for r in rows] == [0, 1, 1, 1, 1, 2]
    assert [r.label for r in rows] == ["(root)", "0", "1", "2", "3", "0"]
    bn = rows[2]
    assert [(t.name, t.kind, t.shape, t.dtype, t.persistent) for t in bn.tensors] == [
        ("1.weight", "parameter", (3,), "float32", True),
        ("1.bias", "parameter", (3,), "float32", True),
        ("1.running_mean", "buffer", (3,), "float32", True),
        ("1.running_var", "buffer", (3,), "float32", True),
        ("1.num_batches_tracked", "buffer", (), "int64", True),
        ("1.scratch", "buffer", (2,), "float32", False),
    ]
    assert [t.requires_grad for t in bn.tensors] == [True, True, False, False, False, False]
    assert rows[1].tensors[0].numel == 12 and rows[1].tensors[0].device == "cpu"
    assert rows[0].tensors == () and rows[3].tensors == ()
    assert [r.parameter_count for r in rows] == [0, 15, 6, 0, 0, 8]  # own parameters only


def test_tensor_names_are_state_dict_keys_plus_non_persistent_buffers(model):
    names = ParameterTreeModel(model).tensor_names()
    assert [n for n in names if n != "1.scratch"] == list(model.state_dict().keys())


def test_same_rows_as_real_torch(model, real_torch):
    twin = nested_model(real_torch.nn, real_torch)
    ours, theirs = ParameterTreeModel(model), ParameterTreeModel(twin)
    assert [(r.name, r.class_name) for r in ours.rows()] == [
        (name, type(m).__name__) for name, m in twin.named_modules()]
    assert ours.rows() == theirs.rows()  # every field: names, shapes, dtypes, flags, counts
    assert ours.totals() == theirs.totals()


def test_totals_count_trainable_frozen_and_buffers(model):
    model[0].weight.requires_grad_(False)
    totals = ParameterTreeModel(model).totals()
    assert totals == {"parameters": 12 + 3 + 3 + 3 + 6 + 2, "trainable": 3 + 3 + 3 + 6 + 2,
                      "frozen": 12, "buffers": 3 + 3 + 1 + 2}


def test_train_eval_flag_and_refresh(model):
    tree = ParameterTreeModel(model)
    assert all(r.training for r in tree.rows())
    model.eval()
    assert all(r.training for r in tree.rows())  # a snapshot until refresh()
    tree.refresh()
    assert not any(r.training for r in tree.rows())
    assert "[eval]" in tree.tree_lines()[0]


def test_values_grad_and_summary(model):
    tree = ParameterTreeModel(model)
    assert tree.grad("0.weight") is None
    assert tree.tensor_summary("0.weight")["grad_stats"] is None
    model(et.randn(5, 4)).sum().backward()
    tree.refresh()
    weight = model[0].weight
    np.testing.assert_array_equal(tree.values("0.weight"), weight.detach().numpy())
    np.testing.assert_array_equal(tree.grad("0.weight"), weight.grad.numpy())
    assert tree.grad("1.running_mean") is None  # buffers have no grad
    summary = tree.tensor_summary("0.weight")
    assert summary["shape"] == (3, 4) and summary["kind"] == "parameter"
    values = weight.detach().numpy().astype(np.float64)
    assert summary["stats"].mean == pytest.approx(values.mean())
    assert summary["stats"].std == pytest.approx(values.std(ddof=1))
    assert summary["stats"].norm == pytest.approx(np.linalg.norm(values))
    assert summary["grad_stats"].max == pytest.approx(float(weight.grad.numpy().max()))
    assert next(t for t in tree.rows()[1].tensors if t.name == "0.weight").has_grad


def test_unknown_name_is_a_key_error(model):
    with pytest.raises(KeyError, match="no parameter or buffer named 'nope'"):
        ParameterTreeModel(model).tensor("nope")


def test_refresh_after_pruning_shows_orig_and_mask(model):
    tree = ParameterTreeModel(model)
    prune.l1_unstructured(model[0], "weight", amount=0.5)
    tree.refresh()
    names = [t.name for t in tree.rows()[1].tensors]
    assert names == ["0.bias", "0.weight_orig", "0.weight_mask", "0.weight"]
    assert [t.role for t in tree.rows()[1].tensors] == ["", "original", "original", "derived"]
    mask = tree.tensor_summary("0.weight_mask")
    assert mask["kind"] == "buffer" and mask["persistent"]
    assert mask["stats"].zeros == pytest.approx(0.5)


def test_tree_lines_describe_every_tensor(model):
    lines = ParameterTreeModel(model).tree_lines()
    assert lines[0] == "(root): Sequential [train]"
    assert lines[1] == "  0: Linear [train], 15 parameters"
    assert "    · weight (3, 4) float32 cpu, parameter, requires_grad, 12 elements" in lines
    assert any("scratch (2,) float32 cpu, buffer, non-persistent" in line for line in lines)
    assert lines[-1] == ("total: 29 parameters (29 trainable, 0 frozen), "
                         "9 buffer elements")


# -- the view ----------------------------------------------------------------------------
def test_view_selects_a_tensor_and_draws_it(model):
    view = ParameterTree(model)
    assert repr(view) == "ParameterTree(Sequential, 6 modules)"
    assert view.select.options == tuple(view.model.tensor_names())
    assert view.select.value == "0.weight"
    first = png_bytes(view.image)
    assert is_png(first)
    assert "29 parameters" in view.title.value
    view.select.value = "1.running_var"
    assert is_png(view.image.value) and png_bytes(view.image) != first
    assert "1.running_var" in view.summary.value and "buffer" in view.summary.value
    assert "background:#ffe8a3" in view.tree_html.value  # the selected row is highlighted
    highlighted = view.tree_html.value.split("background:#ffe8a3")[1].split("</td>")[0]
    assert "running_var" in highlighted


def test_view_shows_grad_after_backward_and_refresh(model):
    view = ParameterTree(model)
    assert "grad:" not in view.summary.value
    before = png_bytes(view.image)
    model(et.randn(5, 4)).sum().backward()
    view.refresh_button.click()
    assert view.select.value == "0.weight"  # the selection survives a refresh
    assert "grad:" in view.summary.value
    assert png_bytes(view.image) != before


def test_view_refresh_after_pruning_lists_new_names(model):
    view = ParameterTree(model)
    prune.random_unstructured(model[3][0], "weight", amount=0.5)
    view.refresh()
    assert "3.0.weight_orig" in view.select.options and "3.0.weight_mask" in view.select.options
    assert "weight_mask" in view.tree_html.value
    view.select.value = "3.0.weight_mask"
    assert "zeros 50.0%" in view.summary.value


def test_view_of_the_784_mlp_switches_between_all_tensors():
    et.manual_seed(0)
    model = mlp(nn, (784, 256, 128, 10))
    view = ParameterTree(model)
    pictures = set()
    for name in view.select.options:
        view.select.value = name
        pictures.add(png_bytes(view.image))
    assert len(pictures) == len(view.select.options) == 6


# -- reparametrizations: derived tensors next to the originals they are computed from ------------
def symmetric(nn_module):
    class Symmetric(nn_module.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def reparametrized_model(framework):
    """Four Linear layers: parametrize (symmetric), parametrizations.weight_norm, the hook-based
    weight_norm, and l1 pruning."""
    import importlib
    import warnings

    nn_module = framework.nn
    utils = importlib.import_module(framework.__name__ + ".nn.utils.prune")
    framework.manual_seed(0)
    model = nn_module.Sequential(*(nn_module.Linear(3, 3) for _ in range(4)))
    nn_module.utils.parametrize.register_parametrization(model[0], "weight", symmetric(nn_module))
    nn_module.utils.parametrizations.weight_norm(model[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the old weight_norm is deprecated
        nn_module.utils.weight_norm(model[2])
    utils.l1_unstructured(model[3], "weight", amount=0.5)
    return model


def test_parametrized_weight_is_a_derived_row_next_to_its_originals():
    model = reparametrized_model(et)
    tree = ParameterTreeModel(model)
    assert tree.derived_names() == ["0.weight", "1.weight", "2.weight", "3.weight"]
    row = tree.tensor_row("0.weight")
    assert (row.kind, row.role, row.how, row.persistent, row.has_grad) == (
        "derived", "derived", "parametrize", False, False)
    assert row.related == ("0.parametrizations.weight.original",) == tree.sources("0.weight")
    assert row.shape == (3, 3) and row.requires_grad
    original = tree.tensor_row("0.parametrizations.weight.original")
    assert (original.kind, original.role, original.related) == ("parameter", "original", ("0.weight",))
    assert tree.sources("1.weight") == ("1.parametrizations.weight.original0",
                                        "1.parametrizations.weight.original1")
    assert tree.sources("2.weight") == ("2.weight_g", "2.weight_v")
    assert tree.tensor_row("2.weight").how == "forward pre-hook"
    assert tree.sources("3.weight") == ("3.weight_orig", "3.weight_mask")
    assert tree.sources("3.weight_orig") == ()  # only derived tensors have sources
    np.testing.assert_array_equal(tree.values("0.weight"), model[0].weight.detach().numpy())
    w = tree.values("0.weight")
    np.testing.assert_array_equal(w, w.T)  # the symmetric parametrization's value
    assert tree.grad("0.weight") is None


def test_derived_tensors_are_in_neither_state_dict_nor_parameters():
    model = reparametrized_model(et)
    tree = ParameterTreeModel(model)
    stored = [n for n in tree.tensor_names() if n not in tree.derived_names()]
    assert stored == list(model.state_dict().keys())
    assert tree.totals()["parameters"] == sum(p.numel() for p in model.parameters())
    lines = tree.tree_lines()
    assert ("    · weight (3, 3) float32 cpu, derived from parametrizations.weight.original "
            "(a property, recomputed on every read), not in state_dict, 9 elements") in lines
    assert any("weight (3, 3) float32 cpu, derived from weight_g, weight_v (set by a forward "
               "pre-hook at each forward)" in line for line in lines)
    assert any("original0 (3, 1) float32 cpu, parameter, requires_grad, original of 1.weight"
               in line for line in lines)


def test_reading_a_spectral_norm_weight_changes_nothing():
    """In train mode, reading a spectral_norm weight takes a power-iteration step (_u, _v change):
    the tree reads it in eval mode and puts the training flags back."""
    et.manual_seed(0)
    layer = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3))
    buffers = [b.detach().numpy().copy() for b in layer.buffers()]
    tree = ParameterTreeModel(layer)
    assert [b.detach().numpy().tolist() for b in layer.buffers()] == [b.tolist() for b in buffers]
    assert all(m.training for m in layer.modules())
    sigma = np.linalg.svd(tree.values("weight"), compute_uv=False)[0]
    assert sigma == pytest.approx(1.0, rel=1e-3)
    layer.weight  # noqa: B018 (a read in train mode does update them)
    assert not all(np.array_equal(b.detach().numpy(), c) for b, c in zip(layer.buffers(), buffers))


def test_remove_parametrizations_and_refresh_drops_the_derived_row():
    model = reparametrized_model(et)
    tree = ParameterTreeModel(model)
    nn.utils.parametrize.remove_parametrizations(model[0], "weight", leave_parametrized=True)
    tree.refresh()
    row = tree.tensor_row("0.weight")
    assert (row.kind, row.role) == ("parameter", "")
    assert "0.parametrizations.weight.original" not in tree.tensor_names()
    assert tree.derived_names() == ["1.weight", "2.weight", "3.weight"]


def test_derived_rows_same_as_real_torch(real_torch):
    ours = ParameterTreeModel(reparametrized_model(et))
    theirs = ParameterTreeModel(reparametrized_model(real_torch))
    assert ours.rows() == theirs.rows()
    assert ours.tree_lines() == theirs.tree_lines()


def titles(view):
    """The titles of the visible panels, left to right (colour bars have none)."""
    visible = [ax for ax in view.canvas.figure.axes if ax.get_visible() and ax.get_title()]
    return [ax.get_title() for ax in sorted(visible, key=lambda ax: ax.get_position().x0)]


def test_view_draws_a_derived_tensor_next_to_its_original():
    model = reparametrized_model(et)
    view = ParameterTree(model)
    assert DERIVED_COLOR in view.tree_html.value and ORIGINAL_COLOR in view.tree_html.value
    view.select.value = "0.bias"
    plain = png_bytes(view.image)
    view.select.value = "0.weight"
    assert is_png(view.image.value) and png_bytes(view.image) != plain
    assert titles(view) == ["weight (derived)", "original (stored)"]
    assert "(derived); stored <b>0.parametrizations.weight.original</b>" in view.caption.value
    assert "derived from 0.parametrizations.weight.original (a property" in view.summary.value
    view.select.value = "1.weight"  # weight_norm: the original of the same shape is v
    assert "1.parametrizations.weight.original1" in view.caption.value
    view.select.value = "0.parametrizations.weight.original"
    assert titles(view) == ["values", ".grad"]
    assert "stored original of 0.weight" in view.summary.value
    model(et.randn(2, 3)).sum().backward()
    view.refresh()
    assert ".grad: |max|" in view.caption.value  # the original is the leaf that gets .grad


# -- weight distributions (lesson 08) -------------------------------------------------------
def test_distributions_share_one_range_and_list_the_weights(model):
    tree = ParameterTreeModel(model)
    dists = tree.distributions()
    assert [d.name for d in dists] == ["0.weight", "3.0.weight"]  # >= 2 dims: no bias, no buffer
    reach = max(float(np.abs(tree.values(d.name)).max()) for d in dists)
    for d in dists:
        assert np.array_equal(d.edges, dists[0].edges)
        assert d.edges[0] == -reach and d.edges[-1] == reach
        assert d.counts.sum() == tree.tensor_row(d.name).numel
        assert d.std == pytest.approx(float(tree.values(d.name).std(ddof=1)))
    assert (dists[0].fan_in, dists[0].bound) == (4, 0.5)
    (bias,) = tree.distributions(names=["0.bias"], bins=5)
    assert bias.fan_in == 0 and bias.bound == float("inf") and len(bias.counts) == 5


def test_distributions_of_a_conv_weight_count_the_kernel_in_fan_in():
    et.manual_seed(0)
    conv = nn.Conv2d(3, 8, kernel_size=5)
    (d,) = ParameterTreeModel(conv).distributions()
    assert d.fan_in == 3 * 5 * 5
    assert np.abs(conv.weight.detach().numpy()).max() <= d.bound  # PyTorch's default init


def test_distributions_skip_non_finite_values(model):
    with et.no_grad():
        model[0].weight[0, 0] = float("inf")
    (first, second) = ParameterTreeModel(model).distributions()
    assert first.counts.sum() == 11 and np.isfinite(first.edges).all() and np.isfinite(first.std)


def test_distributions_on_real_torch(real_torch):
    real_torch.manual_seed(0)
    model = mlp(real_torch.nn, (10, 6, 3))
    dists = ParameterTreeModel(model).distributions()
    assert [d.name for d in dists] == ["0.weight", "2.weight"]
    assert [d.fan_in for d in dists] == [10, 6]


def test_view_switches_to_weight_distributions_and_back(model):
    view = ParameterTree(model)
    tensor_picture = png_bytes(view.image)
    view.show.value = "distributions"
    assert is_png(view.image.value) and png_bytes(view.image) != tensor_picture
    assert "0.weight (3, 4): std" in view.summary.value and "3.0.weight (2, 3)" in view.summary.value
    assert "fan_in 4" in view.summary.value
    before = png_bytes(view.image)
    with et.no_grad():
        model[0].weight.mul_(10.0)
    view.refresh()  # still showing distributions, of the new values
    assert view.show.value == "distributions" and png_bytes(view.image) != before
    view.select.value = "1.running_var"  # choosing a tensor keeps the distributions picture
    assert "std" in view.summary.value
    view.show.value = "tensor"
    assert "1.running_var" in view.summary.value
    assert view.image.layout.width == view.canvas.css_width


def test_view_distributions_of_a_module_without_weights():
    view = ParameterTree(nn.ReLU())
    view.show.value = "distributions"
    assert is_png(view.image.value) and view.summary.value.endswith("</div>")


def test_a_frozen_parameter_is_said_to_be_frozen_not_waiting_for_backward():
    net = mlp(nn)
    net[0].weight.requires_grad_(False)
    net(et.randn(4, net[0].in_features)).sum().backward()
    view = ParameterTree(net)
    view.select.value = "0.weight"
    text = view.grad_panel.artists["text"].get_text()
    assert "(requires_grad=False)" in text and "backward never" in text and "fills its .grad" in text
    assert "run backward first" not in text
    view.canvas.png()  # draw it: the message must lie inside the picture, not cut at its edge
    box = view.grad_panel.artists["text"].get_window_extent(view.canvas.figure.canvas.get_renderer())
    width, height = view.canvas.figure.canvas.get_width_height()
    assert box.x0 >= 0 and box.x1 <= width and box.y0 >= 0 and box.y1 <= height, (box, width, height)
    fresh = ParameterTree(mlp(nn))  # trainable, no backward yet: the old hint is right
    fresh.select.value = "0.weight"
    assert "run backward first" in fresh.grad_panel.artists["text"].get_text()


def test_statistics_are_cached_per_tensor_version_and_follow_changes(model):
    tree = ParameterTreeModel(model)
    name = tree.tensor_names()[0]
    weight = tree.tensor(name)
    first = tree.tensor_summary(name)["stats"]
    assert tree.tensor_summary(name)["stats"] is first  # the same version: not recomputed
    with et.no_grad():
        weight.mul_(2.0)  # in place: a new _version
    again = tree.tensor_summary(name)["stats"]
    assert again is not first and again.norm == pytest.approx(2 * first.norm, rel=1e-6)
    assert again.norm == pytest.approx(np.linalg.norm(tree.values(name)), rel=1e-6)


def test_distributions_of_a_big_weight_count_a_stated_sample(monkeypatch):
    import widgets.parameter_tree as pt
    monkeypatch.setattr(pt, "SAMPLE_SIZE", 50)
    net = mlp(nn)
    tree = ParameterTreeModel(net)
    distributions = tree.distributions()
    first = distributions[0]
    values = tree.values(first.name)
    assert first.sampled == 50 and first.counts.sum() == 50
    reach = max(np.abs(tree.values(d.name)).max() for d in distributions)
    assert first.edges[-1] == pytest.approx(reach)  # the range: from every entry
    assert first.std == pytest.approx(values.std(ddof=1), rel=1e-6)
    monkeypatch.setattr("widgets.parameter_tree_view.SAMPLE_SIZE", 50)
    view = ParameterTree(net)
    view.show.value = "distributions"
    assert "a random sample of 50 entries" in view.caption.value


def _tree_with_grads():
    et.manual_seed(0)
    model = mlp(nn)
    model(et.ones(3, 20)).sum().backward()
    return ParameterTree(model)


def test_a_tensor_rendered_ahead_is_shown_without_drawing(monkeypatch):
    """In a kernel, once the controls rest, the dropdown's next tensor is ready: choosing
    it shows its picture without drawing, byte for byte what a fresh tree draws, and
    going back shows the first tensor's picture again."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    view = asyncio.run(built_in_a_kernel(_tree_with_grads, lambda view: not view.ahead.pending))
    first = (bytes(view.image.value), view.caption.value)
    second = view.select.options[1]
    assert second in view.rendered

    def no_drawing(*args):
        raise AssertionError("drawn again")
    monkeypatch.setattr(view.canvas, "png", no_drawing)
    view.select.value = second
    fresh = _tree_with_grads()
    fresh.select.value = second
    assert bytes(view.image.value) == bytes(fresh.image.value)
    assert view.caption.value == fresh.caption.value
    view.select.value = view.select.options[0]
    assert (bytes(view.image.value), view.caption.value) == first


def test_a_kept_picture_is_drawn_anew_after_the_tensor_changed_in_place():
    """An optimizer step (or a gradient accumulated) bumps ``_version``: the kept picture of
    that tensor is not shown, a new one is (what a fresh tree shows)."""
    view = _tree_with_grads()
    name = view.select.value
    before = (bytes(view.image.value), view.caption.value)
    view.select.value = view.select.options[1]
    with et.no_grad():
        view.model.tensor(name).mul_(3.0)
    view.model.tensor(name).grad.mul_(0.5)
    view.select.value = name
    assert (bytes(view.image.value), view.caption.value) != before
    fresh = ParameterTree(view.model.module)
    assert (bytes(view.image.value), view.caption.value) == (
        bytes(fresh.image.value), fresh.caption.value)


def test_the_distributions_rendered_ahead_are_shown_without_drawing(monkeypatch):
    """Once the controls rest, the other side of the *show* toggle is ready both ways:
    every weight's distribution (what a fresh tree draws) and back the tensor's picture;
    a weight changed in place is drawn anew."""
    import asyncio

    from widget_helpers import built_in_a_kernel

    view = asyncio.run(built_in_a_kernel(_tree_with_grads, lambda view: not view.ahead.pending))
    tensor_picture = bytes(view.image.value)
    drawn = []
    real = view.distributions_picture.png
    monkeypatch.setattr(view.distributions_picture, "png", lambda d: drawn.append(1) or real(d))
    view.show.value = "distributions"
    fresh = _tree_with_grads()
    fresh.show.value = "distributions"
    assert not drawn
    assert (bytes(view.image.value), view.caption.value, view.summary.value) == (
        bytes(fresh.image.value), fresh.caption.value, fresh.summary.value)
    view.show.value = "tensor"
    assert bytes(view.image.value) == tensor_picture
    with et.no_grad():
        view.model.tensor("0.weight").mul_(2.0)
    view.show.value = "distributions"
    assert drawn and bytes(view.image.value) != bytes(fresh.image.value)


def test_big_weights_distributions_are_not_rendered_ahead(monkeypatch):
    """Above AHEAD_MAX_ELEMENTS weight elements the distributions take long: a click would
    wait for them, so only the neighbour tensors are rendered ahead."""
    import asyncio

    import widgets.parameter_tree_view as view_module
    from widget_helpers import built_in_a_kernel

    monkeypatch.setattr(view_module, "AHEAD_MAX_ELEMENTS", 100)
    view = asyncio.run(built_in_a_kernel(_tree_with_grads, lambda view: not view.ahead.pending))
    assert view.distributions_kept is None and view.select.options[1] in view.rendered
