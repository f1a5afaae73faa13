"""``torch.amp.GradScaler`` on the CPU, against real PyTorch: the same scale sequence
(backoff on inf/NaN, growth after ``growth_interval`` clean steps), skipped steps,
the same parameters after N steps, and PyTorch's errors."""
import pickle

import numpy as np
import pytest

import edutorch


def _train(lib, steps, bad_steps, unscale_and_clip=False, **scaler_kwargs):
    """N SGD steps of a small linear model with a scaler; ``bad_steps`` get an inf in the loss."""
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    x, y = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(w))
        model.bias.copy_(lib.tensor(b))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    scales, returned = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(lib.tensor(x)), lib.tensor(y))
        if step in bad_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        if unscale_and_clip:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        returned.append(scaler.step(opt))
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, [p.detach().numpy().copy() for p in model.parameters()], scaler.state_dict(), returned


# the injected inf makes NaN gradients: NumPy warns about them, PyTorch is silent (README)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")


@pytest.mark.parametrize("unscale_and_clip", [False, True])
def test_scale_sequence_and_parameters_match_torch(real_torch, unscale_and_clip):
    kwargs = dict(init_scale=2.0**10, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)
    got = _train(edutorch, 14, {2, 3, 9}, unscale_and_clip, **kwargs)
    expected = _train(real_torch, 14, {2, 3, 9}, unscale_and_clip, **kwargs)
    assert got[0] == expected[0]  # the scale after each update
    # two clean updates, backoff twice (×0.25), three clean updates and growth (×4)
    assert got[0][:7] == [1024.0, 1024.0, 256.0, 64.0, 64.0, 64.0, 256.0]
    for p, q in zip(got[1], expected[1]):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)
    assert got[2] == expected[2]
    assert got[3] == expected[3] == [None] * 14  # SGD.step returns None; skipped steps too


def test_skipped_step_leaves_parameters_unchanged():
    model = edutorch.nn.Linear(2, 1)
    before = [p.detach().clone() for p in model.parameters()]
    opt = edutorch.optim.SGD(model.parameters(), lr=1.0)
    scaler = edutorch.amp.GradScaler("cpu")
    loss = model(edutorch.ones(1, 2)).sum() * float("nan")
    scaler.scale(loss).backward()
    scaler.step(opt)
    for p, q in zip(model.parameters(), before):
        assert edutorch.equal(p.detach(), q)
    scaler.update()
    assert scaler.get_scale() == 2.0**15


def test_unscale_divides_gradients_by_the_scale():
    w = edutorch.ones(3, requires_grad=True)
    opt = edutorch.optim.SGD([w], lr=0.1)
    scaler = edutorch.amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale((w * edutorch.tensor([1.0, 2.0, 3.0])).sum()).backward()
    assert w.grad.tolist() == [8.0, 16.0, 24.0]
    scaler.unscale_(opt)
    assert w.grad.tolist() == [1.0, 2.0, 3.0]


def test_scale_of_lists_and_tuples(real_torch):
    for lib in (edutorch, real_torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        out = scaler.scale([lib.ones(2), (lib.ones(1), lib.ones(1))])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[0].tolist() == [4.0, 4.0] and out[1][1].tolist() == [4.0]
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            scaler.scale([3])


def _errors(lib):
    """Each misuse of the scaler and the message it raises."""
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu")
    found = []

    def expect(fn):
        try:
            fn()
        except (RuntimeError, AssertionError, ValueError) as e:
            found.append((type(e).__name__, str(e)))
        else:
            found.append(None)

    expect(lambda: scaler.step(opt))  # before scale()
    expect(lambda: scaler.update())
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    expect(lambda: scaler.unscale_(opt))
    scaler.step(opt)
    expect(lambda: scaler.step(opt))
    expect(lambda: scaler.unscale_(opt))
    expect(lambda: scaler.step(opt, closure=lambda: 0))
    scaler.update()
    expect(lambda: scaler.update())  # no inf checks recorded since
    half = lib.ones(2, dtype=lib.float16, requires_grad=True)
    opt16 = lib.optim.SGD([half], lr=0.1)
    scaler.scale(half.sum()).backward()
    expect(lambda: scaler.unscale_(opt16))
    expect(lambda: lib.amp.GradScaler("cpu", growth_factor=1.0))
    expect(lambda: lib.amp.GradScaler("cpu", backoff_factor=1.0))
    expect(lambda: lib.amp.GradScaler("cpu", enabled=False).load_state_dict({}) or lib.amp.GradScaler("cpu")
           .load_state_dict({}))
    return found


def test_errors_match_torch(real_torch):
    got, expected = _errors(edutorch), _errors(real_torch)
    assert got == expected
    assert ("RuntimeError", "unscale_() has already been called on this optimizer since the last update().") in got
    assert ("ValueError", "Attempting to unscale FP16 gradients.") in got


def test_update_with_new_scale(real_torch):
    for lib in (edutorch, real_torch):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update(3.0)
        assert scaler.get_scale() == 3.0
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update(lib.tensor(5.0))
        assert scaler.get_scale() == 5.0
        with pytest.raises(AssertionError, match="new_scale should be a float or a 1-element"):
            scaler.update(lib.ones(2))


def test_state_dict_round_trip_and_pickle(real_torch):
    for lib in (edutorch, real_torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=16.0, growth_interval=7)
        assert scaler.state_dict() == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                       "growth_interval": 7, "_growth_tracker": 0}
        state = dict(scaler.state_dict(), scale=128.0, _growth_tracker=3)
        other = lib.amp.GradScaler("cpu")
        other.load_state_dict(state)
        assert other.state_dict() == state and other.get_scale() == 128.0
        copy = pickle.loads(pickle.dumps(other))
        assert copy.state_dict() == state


def test_disabled_scaler_is_a_pass_through(real_torch):
    for lib in (edutorch, real_torch):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=1.0)
        scaler = lib.amp.GradScaler("cpu", enabled=False)
        loss = w.sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        assert w.tolist() == [0.0, 0.0]
        assert (scaler.is_enabled(), scaler.get_scale(), scaler.state_dict()) == (False, 1.0, {})


def test_cuda_scaler_without_a_gpu_warns_and_disables(real_torch):
    for lib in (edutorch, real_torch):
        with pytest.warns(UserWarning, match="torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."):
            scaler = lib.amp.GradScaler()
        assert not scaler.is_enabled()


def test_cuda_scaler_on_the_cupy_standin(fake_cuda):
    w = edutorch.ones(2, device="cuda", requires_grad=True)
    opt = edutorch.optim.SGD([w], lr=0.5)
    scaler = edutorch.amp.GradScaler()  # device="cuda"
    assert scaler.is_enabled()
    scaler.scale(w.sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert w.device.type == "cuda" and w.cpu().tolist() == [0.5, 0.5]
    scaler.scale(w.sum() * float("inf")).backward()
    scaler.step(opt)
    scaler.update()
    assert w.cpu().tolist() == [0.5, 0.5] and scaler.get_scale() == 2.0**15
