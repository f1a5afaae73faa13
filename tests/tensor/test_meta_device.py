"""The ``meta`` device: shapes and dtypes without data, as PyTorch's (``edutorch/_meta.py``).

Factories and ``with torch.device("meta")`` make meta tensors; ops on them give
meta results of PyTorch's shapes and dtypes (forward and backward); reading
values raises PyTorch's errors; a model built on meta gets memory from
``to_empty`` or from ``load_state_dict(..., assign=True)``, and a plain
``load_state_dict`` warns that copying into it does nothing.
"""
import warnings

import numpy as np
import pytest

import edutorch


def _ops(L):
    F = L.nn.functional
    m = lambda *s, **k: L.empty(*s, device="meta", **k)  # noqa: E731
    return [
        m(2, 3) @ m(3, 4), m(2, 3) + m(3), m(2, 3).sum(1), m(4, 5).t(), m(2, 3, 4).reshape(6, -1),
        m(2, 3)[1:, None], F.relu(m(5)), L.softmax(m(2, 7), -1), L.cat([m(2, 3), m(1, 3)]),
        F.linear(m(4, 3), m(2, 3), m(2)), F.conv2d(m(1, 3, 8, 8), m(4, 3, 3, 3), padding=1),
        F.cross_entropy(m(4, 5), L.empty(4, dtype=L.int64, device="meta")), m(3, 3).exp().mean(),
        m(2, 3, dtype=L.float64) * 2, m(3) > 0, L.zeros_like(m(2, 2)), L.randn(3, 2, device="meta"),
        L.ones(2, dtype=L.int64, device="meta"), m(0, 4),
    ]


def test_ops_on_meta_tensors_print_and_shape_as_torch(real_torch):
    got, expected = _ops(edutorch), _ops(real_torch)
    for g, e in zip(got, expected):
        assert g.is_meta and e.is_meta
        assert (tuple(g.shape), str(g.dtype), g.device.type) == (tuple(e.shape), str(e.dtype), "meta")
        assert repr(g).split(", grad_fn")[0] == repr(e).split(", grad_fn")[0]


def test_a_meta_tensor_of_any_size_costs_no_memory():
    import tracemalloc

    tracemalloc.start()
    try:
        x = edutorch.empty(10**6, 10**6, device="meta")
        model = edutorch.nn.Linear(10**5, 10**5, device="meta")  # 10**10 parameters, initialized in place
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert x.shape == (10**6, 10**6) and model.weight.is_meta and peak < 1_000_000
    y = edutorch.empty(500, 400, device="meta") * 2  # computed on zeros (README), kept as no data
    assert y.is_meta and y._data.strides == (0, 0)


ERRORS = [
    ("item", lambda L, x: L.empty(1, device="meta").item()),
    ("numpy", lambda L, x: x.numpy()),
    ("cpu", lambda L, x: x.cpu()),
    ("tolist", lambda L, x: x.tolist()),
    ("to cpu", lambda L, x: x.to("cpu")),
    ("mixed devices", lambda L, x: x + L.ones(2, 3)),
]


@pytest.mark.parametrize("name,use", ERRORS, ids=[e[0] for e in ERRORS])
def test_reading_values_raises_as_torch(real_torch, name, use):
    errors = []
    for lib in (real_torch, edutorch):
        with pytest.raises(Exception) as info:
            use(lib, lib.empty(2, 3, device="meta"))
        errors.append((type(info.value), str(info.value).splitlines()[0]))
    assert errors[1] == errors[0]


def test_backward_on_meta_gives_meta_gradients(real_torch):
    for lib in (edutorch, real_torch):
        w = lib.ones(3, 2, requires_grad=True, device="meta")
        (lib.empty(4, 3, device="meta") @ w).relu().sum().backward()
        assert w.grad.is_meta and w.grad.shape == (3, 2)


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))


def test_a_model_built_under_the_meta_device_context(real_torch):
    for lib in (edutorch, real_torch):
        with lib.device("meta"):
            model = _net(lib)
            inside = lib.ones(2)
        assert all(p.is_meta for p in model.parameters()) and inside.is_meta and not lib.ones(2).is_meta
        assert repr(model[0].bias) == "Parameter containing:\ntensor(..., device='meta', size=(8,), requires_grad=True)"
        assert model(lib.empty(5, 4, device="meta")).shape == (5, 2)


def test_to_empty_then_initialize(real_torch):
    for lib in (edutorch, real_torch):
        with lib.device("meta"):
            model = _net(lib)
        params = list(model.parameters())
        assert model.to_empty(device="cpu") is model
        assert all(p.device.type == "cpu" and not p.is_meta for p in model.parameters())
        assert not any(p is q for p, q in zip(params, model.parameters()))  # new Parameter objects, as in PyTorch
        for layer in (model[0], model[2]):
            layer.reset_parameters()
        assert model(lib.ones(1, 4)).shape == (1, 2)


def test_load_state_dict_into_a_meta_model(real_torch):
    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(v.shape).astype(np.float32) for k, v in _net(edutorch).state_dict().items()}
    outputs = []
    for lib in (edutorch, real_torch):
        state = {k: lib.tensor(a) for k, a in arrays.items()}
        with lib.device("meta"):
            model = _net(lib)
        with pytest.warns(UserWarning, match="copying from a non-meta parameter in the checkpoint to a meta "
                                             "parameter in the current model, which is a no-op"):
            model.load_state_dict(state)
        assert model[0].weight.is_meta
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = model.load_state_dict(state, assign=True)
        assert not result.missing_keys and not result.unexpected_keys
        assert isinstance(model[0].weight, lib.nn.Parameter) and model[0].weight.requires_grad
        assert model[0].weight.data_ptr() == state["0.weight"].data_ptr() if lib is real_torch else \
            model[0].weight._data is state["0.weight"]._data  # assigned, not copied
        outputs.append(model(lib.ones(3, 4)).detach().numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-6)


def test_sampling_in_place_on_meta_draws_nothing():
    edutorch.manual_seed(0)
    expected = edutorch.rand(3)
    edutorch.manual_seed(0)
    x = edutorch.empty(1000, device="meta")
    assert x.uniform_() is x and x.normal_().is_meta
    np.testing.assert_array_equal(edutorch.rand(3).numpy(), expected.numpy())


def test_ops_pay_nothing_for_the_meta_device_once_no_meta_tensor_is_left():
    import gc

    from edutorch.autograd import function

    def registered():
        return [fn.__name__ for _, fn in function.apply_interceptors.active]

    x = edutorch.empty(3, device="meta")
    y = (x * 2).sum()
    assert "_run_on_meta" in registered()
    del x, y
    gc.collect()
    assert "_run_on_meta" not in registered()
