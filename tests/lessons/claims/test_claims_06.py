"""Lesson 06 (``train()`` and ``eval()``): its sentences about PyTorch, checked under real PyTorch 2.13."""
import pytest
from _claims import error_of, real_torch

torch = real_torch()
nn, F = torch.nn, torch.nn.functional


def small_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Sequential(nn.Dropout(0.5)),
                         nn.Linear(8, 2))


def test_eval_is_train_false_recursive_and_returns_the_model():
    """"A new module is in training mode. ``model.eval()`` is ``model.train(False)``: it sets
    ``training = False`` on the model **and every submodule** ... and returns the model itself"."""
    model = small_model()
    assert all(m.training for m in model.modules())
    assert model.eval() is model and not any(m.training for m in model.modules())
    assert model.train() is model and all(m.training for m in model.modules())


def test_assigning_training_switches_one_module_only():
    """"The ``model.training = False`` line is a classic mistake: it switches the container, but the
    ``Dropout`` and ``BatchNorm1d`` inside still train"."""
    model = small_model()
    model.training = False
    assert not model.training and model[1].training and model[3][0].training


def test_eval_does_not_turn_autograd_off():
    """"it does not touch ``requires_grad``, and it does not turn autograd off. In eval mode the
    forward still records the graph ... and ``backward`` still works"."""
    model = small_model().eval()
    out = model(torch.randn(3, 4))
    assert out.grad_fn is not None and all(p.requires_grad for p in model.parameters())
    out.sum().backward()
    assert model[0].weight.grad is not None
    with torch.no_grad():
        assert model(torch.randn(3, 4)).grad_fn is None


def test_inference_tensors_cannot_be_saved_for_backward_but_may_enter_ops_that_save_nothing():
    """"PyTorch refuses to save the tensors it creates for a later backward, so they cannot enter a
    recorded op that saves its inputs, such as ``*`` or a ``Linear``" — an op that saves nothing
    (``+``) accepts them."""
    with torch.inference_mode():
        made = torch.ones(3)
    w = torch.ones(3, requires_grad=True)
    assert (made + w).requires_grad
    for op in (lambda: made * w, lambda: nn.Linear(3, 2)(made)):
        error = error_of(op)
        assert isinstance(error, RuntimeError) and "Inference tensors cannot be saved for backward" in str(error)


def test_dropout_zeroes_with_p_scales_the_rest_and_is_identity_in_eval():
    """"``nn.Dropout(p)`` zeroes each element independently with probability ``p`` (default 0.5) and
    multiplies the others by ``1/(1-p)``"; "in eval mode Dropout can simply return its input
    unchanged"."""
    assert nn.Dropout().p == 0.5
    torch.manual_seed(0)
    dropout, x = nn.Dropout(0.25), torch.ones(100_000)
    y = dropout(x)
    assert y.unique().tolist() == [0.0, pytest.approx(1 / 0.75)]
    assert (y == 0).float().mean().item() == pytest.approx(0.25, abs=0.01)
    assert y.mean().item() == pytest.approx(1.0, abs=0.02)
    dropout.eval()
    assert torch.equal(dropout(x), x)


def test_functional_dropout_trains_by_default():
    """"``nn.functional.dropout(x, p, training=True)`` has no mode of its own: its ``training``
    argument **defaults to ``True``**"."""
    torch.manual_seed(0)
    x = torch.ones(1000)
    assert (F.dropout(x, 0.5) == 0).any()
    assert torch.equal(F.dropout(x, 0.5, training=False), x)


def test_batchnorm_statistics_biased_to_normalise_unbiased_to_track():
    """"the batch's mean and *biased* variance (divide by ``N``), and normalises with them";
    "``running_mean = (1 - momentum) * running_mean + momentum * batch_mean``, and the same for
    ``running_var`` with the batch's **unbiased** variance"; "momentum (default 0.1)"; "The buffers
    start at 0 (mean) and 1 (variance)"; "``num_batches_tracked`` counts the batches"."""
    bn = nn.BatchNorm1d(3)
    assert bn.momentum == 0.1 and bn.eps == 1e-5
    assert torch.equal(bn.running_mean, torch.zeros(3)) and torch.equal(bn.running_var, torch.ones(3))
    torch.manual_seed(0)
    x = torch.randn(6, 3) * 2 + 1
    y = bn(x)
    mean, biased = x.mean(0), x.var(0, unbiased=False)
    assert torch.allclose(y, (x - mean) / torch.sqrt(biased + bn.eps), atol=1e-5)
    assert torch.allclose(bn.running_mean, 0.1 * mean)
    assert torch.allclose(bn.running_var, 0.9 + 0.1 * x.var(0, unbiased=True))
    assert bn.num_batches_tracked.item() == 1


def test_batchnorm_eval_uses_running_statistics_and_changes_nothing():
    """"**in eval mode**: it normalises with ``running_mean`` and ``running_var``, and changes
    nothing. One sample's output then depends only on that sample"."""
    bn = nn.BatchNorm1d(3)
    bn(torch.randn(8, 3) + 2)
    bn.eval()
    state = {k: v.clone() for k, v in bn.state_dict().items()}
    x = torch.randn(1, 3)
    y = bn(x)
    assert torch.allclose(y, (x - bn.running_mean) / torch.sqrt(bn.running_var + bn.eps))
    assert all(torch.equal(state[k], v) for k, v in bn.state_dict().items())
    assert torch.equal(bn(torch.cat([x, torch.randn(4, 3)]))[0], y[0])


def test_momentum_none_is_the_cumulative_average():
    """"With ``momentum=None`` the running statistics are the plain (cumulative) average of all
    batches seen: the weight of batch ``k`` is ``1/k``"."""
    bn = nn.BatchNorm1d(2, momentum=None)
    batches = [torch.randn(5, 2) + k for k in range(4)]
    for batch in batches:
        bn(batch)
    assert torch.allclose(bn.running_mean, torch.stack([b.mean(0) for b in batches]).mean(0), atol=1e-6)


def test_track_running_stats_false_keeps_no_buffers_and_uses_batch_statistics_in_eval():
    """"With ``track_running_stats=False`` a BatchNorm has no ``running_mean``, ``running_var`` or
    ``num_batches_tracked`` at all (they are ``None``, and not in the ``state_dict``), and it
    normalises with the batch's statistics **in both modes**"."""
    bn = nn.BatchNorm1d(3, track_running_stats=False)
    assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
    assert list(bn.state_dict()) == ["weight", "bias"]
    x = torch.randn(6, 3)
    train_out = bn(x)
    assert torch.equal(bn.eval()(x), train_out)


def test_two_samples_normalise_to_about_plus_minus_one():
    """"With **two** samples per batch, every normalised value is about ±1 ...
    ``±d / √(d² + eps)``. That is ±1 to within 1 % unless the two values are closer than about 0.05
    (``eps = 1e-5``): 0.0 and 0.002 give ±0.30"."""
    torch.manual_seed(0)
    far = nn.BatchNorm1d(3)(torch.randn(2, 3) * 10)
    assert torch.allclose(far.abs(), torch.ones(2, 3), atol=1e-3)
    close = nn.BatchNorm1d(1)(torch.tensor([[0.0], [0.002]])).flatten()
    assert close.tolist() == [pytest.approx(-0.3015, abs=1e-3), pytest.approx(0.3015, abs=1e-3)]
    edge = nn.BatchNorm1d(1)(torch.tensor([[0.0], [0.05]])).flatten()
    assert 0.99 < edge[1].item() < 1
    d = torch.tensor(0.001)
    assert close[1].item() == pytest.approx((d / torch.sqrt(d ** 2 + 1e-5)).item(), rel=1e-3)


def test_one_value_per_channel_fails_in_training_and_without_running_stats():
    """"With **one** sample there is no variance at all, and BatchNorm refuses in training mode. In
    eval mode, one sample is fine ... (unless ... ``track_running_stats=False``: ... a batch of one
    fails there as well — the message still says "when training")"."""
    bn = nn.BatchNorm1d(3)
    error = error_of(bn, torch.randn(1, 3))
    assert isinstance(error, ValueError) and str(error).startswith("Expected more than 1 value per channel when training")
    assert bn.eval()(torch.randn(1, 3)).shape == (1, 3)
    no_stats = nn.BatchNorm1d(3, track_running_stats=False).eval()
    error = error_of(no_stats, torch.randn(1, 3))
    assert isinstance(error, ValueError) and "when training" in str(error)


def test_batchnorm2d_counts_values_per_channel():
    """"``BatchNorm2d`` accepts one image of several pixels (shape ``(1, C, H, W)``: ``H·W`` values per
    channel) and rejects one image of a single pixel"."""
    bn = nn.BatchNorm2d(3)
    assert bn(torch.randn(1, 3, 2, 2)).shape == (1, 3, 2, 2)
    assert isinstance(error_of(bn, torch.randn(1, 3, 1, 1)), ValueError)


def test_train_mode_output_depends_on_the_batch():
    """"In training, a sample's output also depends on the **other samples of its batch**"."""
    bn, image = nn.BatchNorm1d(4), torch.randn(1, 4)
    with torch.no_grad():
        with_a = bn(torch.cat([image, torch.randn(7, 4)]))[0]
        with_b = bn(torch.cat([image, torch.randn(7, 4) + 3]))[0]
    assert not torch.allclose(with_a, with_b)


def test_failed_batch_of_one_is_still_counted():
    """"BatchNorm counts the batch in ``num_batches_tracked`` before it checks the size, in PyTorch as
    here, so even the failed call adds one"."""
    bn = nn.BatchNorm1d(3)
    error_of(bn, torch.randn(1, 3))
    assert bn.num_batches_tracked.item() == 1


def test_evaluating_in_train_mode_moves_the_running_statistics():
    """"each forward in train mode **moves the running statistics** towards the test data"."""
    model = small_model()
    before = model[1].running_mean.clone()
    with torch.no_grad():
        model(torch.randn(10, 4) + 5)
    assert not torch.equal(before, model[1].running_mean)


def test_train_resets_every_submodule_and_single_submodules_switch_alone():
    """"``model[1].eval()`` only the second layer"; "Since ``model.train()`` resets every submodule,
    the BatchNorm layers have to be switched again after each ``model.train()``"."""
    model = small_model()
    model[1].eval()
    assert not model[1].training and model[3][0].training and model.training
    model.train()
    assert model[1].training


def test_every_batchnorm_derives_from_the_private_base_class():
    """"Every BatchNorm class (``BatchNorm1d``, ``BatchNorm2d``, ...) derives from
    ``nn.modules.batchnorm._BatchNorm``"."""
    for cls in (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm):
        assert issubclass(cls, nn.modules.batchnorm._BatchNorm)
