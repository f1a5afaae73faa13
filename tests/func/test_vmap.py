"""``torch.func.vmap`` (also ``torch.vmap``): values, nesting, randomness and PyTorch's errors.

edutorch runs every op per sample (docs/vmap.md): the values must be those of a
Python loop over the samples, and the refusals PyTorch's BatchedTensor makes
(``.item()``, data-dependent control flow, writing batched values into an
unbatched tensor, random numbers in 'error' mode) must be made all the same.
"""
from pathlib import Path

import numpy as np
import pytest

import edutorch
from edutorch.func import grad, vmap
from edutorch.func import _vmap
from parity import check_parity

XS = np.arange(12.0).reshape(3, 4) / 7 - 0.5
W = np.linspace(-1, 1, 8).reshape(4, 2)


def t(T, a):
    return T.tensor(a)


# -- torch-free checks ---------------------------------------------------------------
def test_vmap_equals_a_loop_over_samples():
    xs = edutorch.tensor(XS)
    w = edutorch.tensor(W)
    out = vmap(lambda x: (x @ w).tanh().sum())(xs)
    loop = [(xs[i] @ w).tanh().sum().item() for i in range(3)]
    np.testing.assert_allclose(out.numpy(), loop)


def test_in_dims_none_and_out_dims():
    xs, w = edutorch.tensor(XS), edutorch.tensor(W)
    out = vmap(lambda w, x: x @ w, in_dims=(None, 1), out_dims=1)(w, xs.T)
    np.testing.assert_allclose(out.numpy(), (XS @ W).T)


def test_vmap_of_grad_gives_per_sample_gradients():
    xs = edutorch.tensor(XS)
    per_sample = vmap(grad(lambda x: (x ** 3).sum()))(xs)
    np.testing.assert_allclose(per_sample.numpy(), 3 * XS ** 2)


def test_gradients_flow_through_vmap():
    xs = edutorch.tensor(XS, requires_grad=True)
    vmap(lambda x: (x ** 2).sum())(xs).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), 2 * XS)


def test_patches_are_removed_after_vmap_even_after_an_error():
    item = edutorch.Tensor.item
    with pytest.raises(RuntimeError, match="item"):
        vmap(lambda x: x.sum().item())(edutorch.tensor(XS))
    assert edutorch.Tensor.item is item and not _vmap._active and not _vmap._Patches.saved and _vmap._depth == [0]
    assert isinstance(edutorch.random.default_generator._rng, np.random.Generator)


def test_item_of_an_unbatched_tensor_is_allowed():
    c = edutorch.tensor(2.0, dtype=edutorch.float64)
    out = vmap(lambda x: x * c.item())(edutorch.tensor(XS))
    np.testing.assert_allclose(out.numpy(), XS * 2)


def test_randomness_same_and_different():
    xs = edutorch.zeros(4, 3)
    same = vmap(lambda x: x + edutorch.rand(3), randomness="same")(xs)
    assert all((same[i] == same[0]).all() for i in range(4))
    different = vmap(lambda x: x + edutorch.rand(3), randomness="different")(xs)
    assert not (different[1] == different[0]).all()
    like = vmap(lambda x: edutorch.rand_like(x), randomness="same")(xs)
    assert (like[3] == like[0]).all()
    filled = vmap(lambda x: x.clone().uniform_(), randomness="same")(xs)  # a batched tensor filled in place
    assert (filled[2] == filled[0]).all()
    dropped = vmap(lambda x: edutorch.nn.functional.dropout(x + 1), randomness="different")(xs)
    assert dropped.shape == (4, 3)


def test_native_batching_table_is_current():
    """docs/vmap.md says which ops have a batching rule: none; every op runs per sample."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "vmap.md").read_text()
    assert "| every op | per sample |" in page
    assert not hasattr(_vmap, "BATCHING_RULES")  # the day one is written, the table must list it


# -- parity with PyTorch -------------------------------------------------------------------
def sin_sum(x):
    return x.sin().sum()


def linear(T):
    m = T.nn.Linear(4, 2).double()
    m.load_state_dict({"weight": t(T, W.T), "bias": t(T, W[0])})
    return m


def custom_functions(T):
    """A user's autograd.Function in the old style (ctx in forward), the PyTorch 2 style, and with a vmap rule."""
    class Old(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class New(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Generated(New):
        generate_vmap_rule = True

    return Old, New, Generated


PROGRAMS = {
    "basic": lambda T: T.vmap(lambda x: x * 2 + 1)(t(T, XS)),
    "torch_func_vmap": lambda T: T.func.vmap(lambda x: x.sum())(t(T, XS)),
    "in_dim_1": lambda T: T.func.vmap(lambda x: x.sum(), in_dims=1)(t(T, XS)),
    "in_dim_negative": lambda T: T.func.vmap(lambda x: x.max(), in_dims=-1)(t(T, XS)),
    "in_dims_none": lambda T: T.func.vmap(lambda x, w: x @ w, in_dims=(0, None))(t(T, XS), t(T, W)),
    "nested_pytree_in": lambda T: T.func.vmap(lambda d: d["a"] * d["b"][0], in_dims=({"a": 0, "b": [None]},))(
        {"a": t(T, XS), "b": [t(T, XS[0])]}),
    "pytree_out": lambda T: T.func.vmap(lambda x: {"s": x.sum(), "p": (x.prod(), x * 2)})(t(T, XS)),
    "out_dims_1": lambda T: T.func.vmap(lambda x: x.exp(), out_dims=1)(t(T, XS)),
    "out_dims_tuple": lambda T: T.func.vmap(lambda x: (x, x.sum()), out_dims=(1, 0))(t(T, XS)),
    "out_dims_none": lambda T: T.func.vmap(lambda x, w: (x * 2, w), in_dims=(0, None), out_dims=(0, None))(
        t(T, XS), t(T, W)),
    "unbatched_output_is_expanded": lambda T: T.func.vmap(lambda x: T.ones(2, dtype=T.float64))(t(T, XS)),
    "nested_vmap": lambda T: T.func.vmap(T.func.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(
        t(T, XS[0]), t(T, XS)),
    "nested_vmap_outer_product": lambda T: T.func.vmap(T.func.vmap(T.dot, in_dims=(None, 0)), in_dims=(0, None))(
        t(T, XS), t(T, XS)),
    "kwargs_not_mapped": lambda T: T.func.vmap(lambda x, scale=1.0: x * scale)(t(T, XS), scale=3.0),
    "chunk_size": lambda T: T.func.vmap(sin_sum, chunk_size=2)(t(T, XS)),
    "empty_batch": lambda T: T.func.vmap(lambda x: x * 2)(T.zeros(0, 2)),
    "reductions_and_views": lambda T: T.func.vmap(lambda x: x.reshape(2, 2).t().softmax(-1).cumsum(0))(t(T, XS)),
    "inplace_on_batched": lambda T: T.func.vmap(lambda x, y: x.clone().add_(y).mul_(2), in_dims=(0, None))(
        t(T, XS), t(T, XS[0])),
    "vmap_of_grad": lambda T: T.func.vmap(T.func.grad(sin_sum))(t(T, XS)),
    "grad_of_vmap": lambda T: T.func.grad(lambda x: T.func.vmap(sin_sum)(x).sum())(t(T, XS)),
    "vmap_of_jacrev": lambda T: T.func.vmap(T.func.jacrev(lambda x: x.sin() * x.sum()))(t(T, XS)),
    "dropout_eval_random_error_mode": lambda T: T.func.vmap(lambda x: T.nn.functional.dropout(x, training=False))(
        t(T, XS)),
    "item_of_unbatched": lambda T: T.func.vmap(lambda x: x * T.tensor(2.0).item())(t(T, XS)),
    "custom_function_generate_vmap_rule": lambda T: T.func.vmap(custom_functions(T)[2].apply)(t(T, XS)),
    "grad_of_custom_function": lambda T: T.func.grad(lambda x: custom_functions(T)[1].apply(x).sum())(t(T, XS)),
    "batch_norm_eval": lambda T: T.func.vmap(T.nn.BatchNorm1d(3).eval())(T.ones(4, 2, 3)),
    "batch_norm_without_running_stats": lambda T: T.func.vmap(T.nn.BatchNorm1d(3, track_running_stats=False))(
        t(T, XS.reshape(3, 2, 2)).float().repeat(1, 1, 2)[..., :3]),
    "linear_module": lambda T: T.func.vmap(linear(T))(t(T, XS)),
    # errors
    "batch_norm_train": lambda T: T.func.vmap(T.nn.BatchNorm1d(3))(T.ones(4, 2, 3)),
    "custom_function_old_style": lambda T: T.func.vmap(custom_functions(T)[0].apply)(t(T, XS)),
    "custom_function_old_style_unbatched": lambda T: T.func.vmap(lambda x: custom_functions(T)[0].apply(
        T.ones(2)))(t(T, XS)),
    "grad_of_old_style_custom_function": lambda T: T.func.grad(lambda x: custom_functions(T)[0].apply(x).sum())(
        t(T, XS)),
    "custom_function_without_vmap_rule": lambda T: T.func.vmap(custom_functions(T)[1].apply)(t(T, XS)),
    "item": lambda T: T.func.vmap(lambda x: x.sum().item())(t(T, XS)),
    "float": lambda T: T.func.vmap(lambda x: float(x[0]))(t(T, XS)),
    "control_flow": lambda T: T.func.vmap(lambda x: x if x.sum() > 0 else -x)(t(T, XS)),
    "tolist": lambda T: T.func.vmap(lambda x: x.tolist())(t(T, XS)),
    "nonzero": lambda T: T.func.vmap(lambda x: x.nonzero())(t(T, XS)),
    "unique": lambda T: T.func.vmap(lambda x: T.unique(x))(t(T, XS)),
    "masked_select": lambda T: T.func.vmap(lambda x: x.masked_select(x > 0))(t(T, XS)),
    "inplace_add_into_unbatched": lambda T: T.func.vmap(lambda x, y: y.add_(x), in_dims=(0, None))(
        t(T, XS), T.zeros(4, dtype=T.float64)),
    "inplace_mul_into_unbatched": lambda T: T.func.vmap(lambda x, y: y.mul_(x), in_dims=(0, None))(
        t(T, XS), T.zeros(4, dtype=T.float64)),
    "copy_into_unbatched": lambda T: T.func.vmap(lambda x, y: y.copy_(x), in_dims=(0, None))(
        t(T, XS), T.zeros(4, dtype=T.float64)),
    "setitem_into_unbatched": lambda T: T.func.vmap(lambda x, y: y.__setitem__(slice(None), x), in_dims=(0, None))(
        t(T, XS), T.zeros(4, dtype=T.float64)),
    "random_error_mode": lambda T: T.func.vmap(lambda x: x + T.randn(4))(t(T, XS)),
    "rand_like_error_mode": lambda T: T.func.vmap(lambda x: T.rand_like(x))(t(T, XS)),
    "dropout_error_mode": lambda T: T.func.vmap(lambda x: T.nn.functional.dropout(x))(t(T, XS)),
    "inplace_random_unbatched_different": lambda T: T.func.vmap(lambda x: T.zeros(4).normal_() + x,
                                                                 randomness="different")(t(T, XS)),
    "bernoulli_batched_same": lambda T: T.func.vmap(lambda x: T.bernoulli(x.sigmoid()), randomness="same")(t(T, XS)),
    "bernoulli_method_batched_same": lambda T: T.func.vmap(lambda x: x.sigmoid().bernoulli(),
                                                           randomness="same")(t(T, XS)),
    "multinomial_batched_same": lambda T: T.func.vmap(lambda x: T.multinomial(x.exp(), 1),
                                                      randomness="same")(t(T, XS)),
    "normal_batched_mean_same": lambda T: T.func.vmap(lambda x: T.normal(x, 1.0), randomness="same")(t(T, XS)),
    "bad_randomness": lambda T: T.func.vmap(lambda x: x, randomness="foo")(t(T, XS)),
    "sizes_differ": lambda T: T.func.vmap(lambda x, y: x)(t(T, XS), T.zeros(4, 2)),
    "in_dim_too_big": lambda T: T.func.vmap(lambda x: x, in_dims=2)(t(T, XS)),
    "in_dim_too_small": lambda T: T.func.vmap(lambda x: x, in_dims=-3)(t(T, XS)),
    "in_dims_structure": lambda T: T.func.vmap(lambda x: x, in_dims=(0, 0))(t(T, XS)),
    "in_dims_none_everywhere": lambda T: T.func.vmap(lambda x: x, in_dims=(None,))(t(T, XS)),
    "in_dims_bad_type": lambda T: T.func.vmap(lambda x: x, in_dims="a")(t(T, XS)),
    "in_dims_top_none": lambda T: T.func.vmap(lambda x: x, in_dims=None)(t(T, XS)),
    "in_dim_float": lambda T: T.func.vmap(lambda x: x, in_dims=(1.5,))(t(T, XS)),
    "in_dim_on_number": lambda T: T.func.vmap(lambda x: x, in_dims=(0,))(2.0),
    "in_dim_on_number_in_dict": lambda T: T.func.vmap(lambda d: d, in_dims=({"a": 0},))({"a": 2.0}),
    "zero_dim_input": lambda T: T.func.vmap(lambda x: x)(T.tensor(2.0)),
    "no_inputs": lambda T: T.func.vmap(lambda: 1)(),
    "empty_list_input": lambda T: T.func.vmap(lambda x: x)([]),
    "returns_number": lambda T: T.func.vmap(lambda x: 1.0)(t(T, XS)),
    "returns_none": lambda T: T.func.vmap(lambda x: (x, None))(t(T, XS)),
    "out_dims_none_batched": lambda T: T.func.vmap(lambda x: x, out_dims=None)(t(T, XS)),
    "out_dims_out_of_range": lambda T: T.func.vmap(lambda x: x, out_dims=3)(t(T, XS)),
    "out_dims_structure": lambda T: T.func.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(t(T, XS)),
    "out_dims_bad_type": lambda T: T.func.vmap(lambda x: x, out_dims="a")(t(T, XS)),
    "chunk_size_zero": lambda T: T.func.vmap(lambda x: x, chunk_size=0)(t(T, XS)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_parity(real_torch, name):
    check_parity(real_torch, PROGRAMS[name], rtol=1e-6, atol=1e-12)
