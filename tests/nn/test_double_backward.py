"""Double backward (``create_graph=True``) through conv, pooling and normalization layers.

PyTorch can differentiate the gradient of these layers again: gradient
penalties (WGAN-GP) and Hessian-vector products through a CNN need it.
Each layer's backward is ONE formula written with Tensor ops (or with
Functions whose own backward is the layer's structure again: im2col/col2im,
pooling), the same for a plain backward and under ``create_graph=True``, so:

* ``gradgradcheck`` (float64 central differences) passes for every layer and
  its important configurations, w.r.t. every input: x, weight, bias and the
  incoming gradient;
* a gradient penalty ``(dL/dx)²`` and a Hessian-vector product give the same
  ``.grad`` on input, weight and bias as real PyTorch;
* the first-order values are the same with and without ``create_graph``,
  and the plain backward builds no graph;
* third derivatives match PyTorch too (the formula differentiates at any order),
  and the pooling/unfold/fold gradient nodes carry PyTorch's names.
"""
import numpy as np
import pytest

import edutorch as et
import edutorch.nn.functional as EF

TORCH_REASON = "real PyTorch not installed: parity test skipped"
R = np.random.default_rng(11)


def randn(*shape):
    return R.standard_normal(shape)


# Each case: (builder, input shape, weight/bias shapes).  ``builder(F, x, *params)``
# runs the layer with a functional module ``F`` (edutorch's or torch's).
RUNNING_MEAN, RUNNING_VAR = randn(3), R.uniform(0.5, 2.0, 3)


def _bn_eval(F, x, *params):
    lib = et if F is EF else __import__("torch")
    weight, bias = params if params else (None, None)
    return F.batch_norm(x, lib.tensor(RUNNING_MEAN), lib.tensor(RUNNING_VAR), weight, bias, training=False)


CASES = {
    # convolution
    "conv2d": (lambda F, x, w, b: F.conv2d(x, w, b), (2, 2, 5, 5), [(3, 2, 3, 3), (3,)]),
    "conv2d_stride2_pad1": (lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
                            (2, 2, 5, 6), [(3, 2, 3, 3), (3,)]),
    "conv2d_dilation2": (lambda F, x, w, b: F.conv2d(x, w, b, dilation=2, padding=1),
                         (2, 2, 6, 5), [(2, 2, 3, 2), (2,)]),
    "conv2d_groups2": (lambda F, x, w, b: F.conv2d(x, w, b, groups=2, padding=1), (2, 4, 4, 4), [(4, 2, 3, 3), (4,)]),
    "conv2d_no_bias": (lambda F, x, w: F.conv2d(x, w, stride=(2, 1)), (2, 2, 5, 5), [(3, 2, 2, 3)]),
    "conv2d_same_even_kernel": (lambda F, x, w, b: F.conv2d(x, w, b, padding="same"),
                                (1, 2, 5, 4), [(2, 2, 4, 2), (2,)]),
    "conv1d": (lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (2, 3, 9), [(4, 3, 3), (4,)]),
    "conv1d_same_even_kernel": (lambda F, x, w: F.conv1d(x, w, padding="same", dilation=1), (2, 2, 7), [(3, 2, 4)]),
    # pooling
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 2), (2, 2, 4, 6), []),
    "max_pool2d_stride_padding": (lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1), (2, 2, 5, 6), []),
    "max_pool2d_overlap_ceil": (lambda F, x: F.max_pool2d(x, 2, stride=1, ceil_mode=True), (1, 2, 4, 5), []),
    "max_pool1d": (lambda F, x: F.max_pool1d(x, 3, stride=2, padding=1), (2, 3, 9), []),
    "avg_pool2d": (lambda F, x: F.avg_pool2d(x, 2), (2, 2, 4, 6), []),
    "avg_pool2d_stride_padding": (lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
                                  (2, 2, 5, 6), []),
    "adaptive_avg_pool2d": (lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 2, 7, 6), []),
    # im2col / col2im (a fold's input: 3 channels x 2*3 kernel offsets, 6 x 4 blocks)
    "unfold": (lambda F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1)), (2, 3, 5, 6), []),
    "fold": (lambda F, x: F.fold(x, (5, 4), (2, 3), padding=1), (2, 18, 24), []),
    # normalization
    "batch_norm_train": (lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         (4, 3, 2, 3), [(3,), (3,)]),
    "batch_norm_train_no_affine": (lambda F, x: F.batch_norm(x, None, None, training=True), (3, 3, 4), []),
    "batch_norm_eval": (_bn_eval, (4, 3, 2, 3), [(3,), (3,)]),
    "batch_norm_eval_no_affine": (_bn_eval, (4, 3, 5), []),
    "layer_norm": (lambda F, x, w, b: F.layer_norm(x, (3, 4), w, b), (2, 2, 3, 4), [(3, 4), (3, 4)]),
    "layer_norm_no_affine": (lambda F, x: F.layer_norm(x, (5,)), (3, 2, 5), []),
    "layer_norm_unbatched": (lambda F, x, w, b: F.layer_norm(x, (3, 4), w, b), (3, 4), [(3, 4), (3, 4)]),
    "group_norm": (lambda F, x, w, b: F.group_norm(x, 2, w, b), (2, 4, 3, 2), [(4,), (4,)]),
    "group_norm_one_group_no_affine": (lambda F, x: F.group_norm(x, 1), (2, 3, 2, 3), []),
}


def _arrays(name):
    _, x_shape, param_shapes = CASES[name]
    return [randn(*x_shape)] + [randn(*s) for s in param_shapes]


def _tensors(lib, arrays, dtype="float64"):
    return [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]


# -- numerical second derivatives -----------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    """Second derivatives w.r.t. x, weight, bias AND the incoming gradient match central differences."""
    build = CASES[name][0]
    inputs = _tensors(et, _arrays(name))
    assert et.autograd.gradcheck(lambda *t: build(EF, *t), inputs)
    assert et.autograd.gradgradcheck(lambda *t: build(EF, *t), inputs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_order_gradients_under_create_graph_are_the_plain_ones(name):
    """One formula: the same values with and without create_graph; without it, no graph."""
    build, arrays = CASES[name][0], _arrays(name)
    cot = None
    results = []
    for create_graph in (False, True):
        inputs = _tensors(et, arrays)
        out = build(EF, *inputs)
        cot = et.tensor(randn(*out.shape)) if cot is None else cot
        grads = et.autograd.grad((out * out * cot).sum(), inputs, create_graph=create_graph)
        assert all(g.requires_grad == create_graph for g in grads)
        results.append([g.detach().numpy() for g in grads])
    for plain, graph in zip(*results):
        np.testing.assert_allclose(graph, plain, rtol=1e-12, atol=1e-13)


# -- parity with torch ---------------------------------------------------------------
def _gradient_penalty(lib, build, arrays, cot, dtype):
    """WGAN-GP's term: ``g = dL/dx`` with create_graph, then ``sum(g²)`` backward into every input."""
    inputs = _tensors(lib, arrays, dtype)
    out = build(lib.nn.functional, *inputs)
    loss = (out * out * lib.tensor(cot.astype(dtype))).sum()  # not linear: g depends on x too
    (g,) = lib.autograd.grad(loss, inputs[0], create_graph=True)
    (g ** 2).sum().backward()
    return [g.detach().numpy()] + [t.grad.numpy() for t in inputs]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's note
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_penalty_matches_torch(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    build, arrays = CASES[name][0], _arrays(name)
    cot = randn(*build(torch.nn.functional, *_tensors(torch, arrays)).shape)
    ours = _gradient_penalty(et, build, arrays, cot, "float64")
    theirs = _gradient_penalty(torch, build, arrays, cot, "float64")
    assert len(ours) == len(theirs) == len(arrays) + 1
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["conv2d_groups2", "max_pool2d_stride_padding", "adaptive_avg_pool2d",
                                  "batch_norm_train", "layer_norm", "group_norm"])
def test_gradient_penalty_matches_torch_in_float32(name):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    build, arrays = CASES[name][0], _arrays(name)
    cot = randn(*build(torch.nn.functional, *_tensors(torch, arrays)).shape)
    ours = _gradient_penalty(et, build, arrays, cot, "float32")
    theirs = _gradient_penalty(torch, build, arrays, cot, "float32")
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def _third_derivatives(lib, build, arrays, cot):
    """``g1 = dL/dx``, ``g2 = d(sum g1²)/dx`` (both with create_graph), then ``sum(g2²)`` backward."""
    inputs = _tensors(lib, arrays)
    loss = (build(lib.nn.functional, *inputs) ** 3 * lib.tensor(cot)).sum()
    (g1,) = lib.autograd.grad(loss, inputs[0], create_graph=True)
    (g2,) = lib.autograd.grad((g1 ** 2).sum(), inputs[0], create_graph=True)
    (g2 ** 2).sum().backward()
    return [g2.detach().numpy()] + [t.grad.numpy() for t in inputs]


@pytest.mark.parametrize("name", ["conv2d", "conv2d_stride2_pad1", "conv2d_groups2", "conv1d", "max_pool2d_overlap_ceil",
                                  "avg_pool2d_stride_padding", "adaptive_avg_pool2d", "unfold", "fold",
                                  "batch_norm_eval", "group_norm"])
def test_third_derivatives_match_torch(name):
    """The backward formulas are themselves differentiable Tensor ops: any order works, as in PyTorch.

    (Not for training batch norm and layer norm: PyTorch's own third derivative of
    those is wrong w.r.t. the input; see the central-difference test below.)
    """
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    build, arrays = CASES[name][0], _arrays(name)
    cot = randn(*build(torch.nn.functional, *_tensors(torch, arrays)).shape)
    for a, b in zip(_third_derivatives(et, build, arrays, cot), _third_derivatives(torch, build, arrays, cot)):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("name", ["batch_norm_train", "layer_norm", "group_norm", "conv2d_stride2_pad1"])
def test_third_derivatives_match_central_differences(name):
    """``gradgradcheck`` of the (create_graph) first gradient: third derivatives of the layer, numerically.

    For training batch norm and layer norm this is where PyTorch 2.13 itself is
    off (its double-backward kernels are not differentiated exactly once more):
    ``sum((d/dx sum(g1²))²)`` backward differs from central differences by ~30%
    there, while ours agrees to 1e-10.
    """
    build, arrays = CASES[name][0], _arrays(name)
    params = _tensors(et, arrays[1:])
    cot = et.tensor(randn(*build(EF, *_tensors(et, arrays)).shape))

    def first_gradient(x):
        (g,) = et.autograd.grad((build(EF, x, *params) ** 3 * cot).sum(), x, create_graph=True)
        return g

    assert et.autograd.gradgradcheck(first_gradient, _tensors(et, arrays[:1]))


@pytest.mark.parametrize("name", ["max_pool2d", "max_pool2d_stride_padding", "avg_pool2d", "avg_pool2d_stride_padding",
                                  "adaptive_avg_pool2d", "unfold", "fold"])
def test_gradient_node_names_match_torch(name):
    """The first-order gradient's own node (what a create_graph graph records) has PyTorch's name.

    Pooling's backward is ``<Op>BackwardBackward0``, recorded even for a constant
    incoming gradient: as in PyTorch it takes the pooling's input too (with a zero
    gradient).  ``unfold``'s backward is ``Col2ImBackward0`` and ``fold``'s
    ``Im2ColBackward0`` (each other's gradient), recorded only for a non-constant one.
    """
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    build, arrays = CASES[name][0], _arrays(name)
    found = []
    for lib in (et, torch):
        for power in (1, 2):  # constant incoming gradient, then one that depends on x
            (x,) = _tensors(lib, arrays)
            out = build(lib.nn.functional, x)
            (g,) = lib.autograd.grad((out ** power).sum(), x, create_graph=True)
            dg = lib.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else None
            found.append((out.grad_fn.name(), g.grad_fn and g.grad_fn.name(),
                          [f and f.name().split("::")[-1] for f, _ in g.grad_fn.next_functions] if g.grad_fn else None,
                          None if dg is None else dg.numpy()))
    for ours, theirs in zip(found[:2], found[2:]):
        assert ours[:3] == theirs[:3]
        if theirs[3] is not None:
            np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


def _small_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Tanh(), nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 2, stride=2, groups=2), nn.GroupNorm(2, 4), nn.Tanh(),
        nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.LayerNorm(16), nn.Linear(16, 1),
    )


def _same_cnn(torch):
    """The CNN in both libraries, from identical (random) weights."""
    theirs = _small_cnn(torch.nn).double()
    for p in theirs.parameters():  # the norms start at weight 1, bias 0: make them matter
        with torch.no_grad():
            p.copy_(torch.tensor(randn(*p.shape)))
    ours = _small_cnn(et.nn).double()
    ours.load_state_dict({k: et.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_wgan_gp_penalty_through_a_cnn_matches_torch():
    """``(‖∂D(x)/∂x‖ - 1)²`` backward: the same parameter and input gradients as torch."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    ours, theirs = _same_cnn(torch)
    x_np = randn(4, 2, 8, 8)

    def run(lib, model):
        x = lib.tensor(x_np, requires_grad=True)
        (g,) = lib.autograd.grad(model(x).sum(), x, create_graph=True)
        penalty = ((g.reshape(4, -1).norm(dim=1) - 1) ** 2).mean()
        penalty.backward()
        return [penalty.item(), x.grad.numpy()] + [None if p.grad is None else p.grad.numpy()
                                                   for p in model.parameters()]

    results = run(et, ours), run(torch, theirs)
    assert len(results[0]) == len(results[1]) == 2 + len(list(theirs.parameters()))
    # the biases of the layer norm and of the linear layer only shift D(x), never dD/dx:
    # in both libraries they get no gradient (None)
    assert [a is None for a in results[0]] == [b is None for b in results[1]] == [False] * 11 + [True, False, True]
    for a, b in zip(*results):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    # the training-mode batch norm updated its running statistics once, as in torch
    for key in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), theirs.state_dict()[key].numpy(), rtol=1e-12)


@pytest.mark.parametrize("train", [True, False])
def test_hessian_vector_product_through_a_cnn_matches_torch(train):
    """``H v`` w.r.t. all parameters: grad of ``<∂L/∂θ, v>``, in train and eval mode."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    ours, theirs = _same_cnn(torch)
    x_np, y_np = randn(4, 2, 8, 8), randn(4, 1)
    v_np = [randn(*p.shape) for p in theirs.parameters()]

    def run(lib, model):
        model.train(train)
        params = list(model.parameters())
        loss = ((model(lib.tensor(x_np)) - lib.tensor(y_np)) ** 2).mean()
        grads = lib.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * lib.tensor(v)).sum() for g, v in zip(grads, v_np))
        hv = lib.autograd.grad(dot, params)
        return [g.detach().numpy() for g in grads] + [h.numpy() for h in hv]

    for a, b in zip(run(et, ours), run(torch, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


# -- the gradient graph stops at the layer ------------------------------------------
def test_input_that_depends_on_the_weight_gets_the_layer_gradient_only():
    """The recomputed forward is differentiated from the layer's own inputs, not beyond them.

    Here the conv input is made from its weight: a create_graph backward must
    not also run backward through ``x = base * w.sum()`` a second time.
    """
    base, w_np = randn(1, 2, 5, 5), randn(3, 2, 3, 3)
    grads = []
    for create_graph in (False, True):
        w = et.tensor(w_np, requires_grad=True)
        out = EF.batch_norm(EF.conv2d(et.tensor(base) * w.sum(), w, padding=1), None, None, training=True)
        (g,) = et.autograd.grad((out ** 3).sum(), w, create_graph=create_graph)
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-13)
    assert et.autograd.gradgradcheck(
        lambda w: EF.conv2d(et.tensor(base) * w.sum(), w, padding=1) ** 2, (et.tensor(w_np, requires_grad=True),))


def test_create_graph_backward_checks_the_saved_input_version():
    """The create_graph backward reads the saved input: modifying it in place is PyTorch's error."""
    x = et.tensor(randn(1, 2, 5, 5), requires_grad=True)
    h = x * 1
    out = EF.conv2d(h, et.tensor(randn(3, 2, 3, 3), requires_grad=True))
    with et.no_grad():
        h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        et.autograd.grad((out ** 2).sum(), x, create_graph=True)
