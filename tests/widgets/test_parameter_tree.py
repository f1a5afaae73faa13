"""ParameterTreeModel (pure Python) and the ParameterTree view, driven headlessly."""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn as nn
import edutorch.nn.utils.prune as prune
from widgets import ParameterTree, ParameterTreeModel

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
    assert names == ["0.bias", "0.weight_orig", "0.weight_mask"]
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
