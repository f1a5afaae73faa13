"""``nn.DataParallel`` and ``nn.parallel``.

On a machine without GPUs (every CI machine) PyTorch's DataParallel is a plain
wrapper: these tests compare that behaviour with PyTorch's.  The GPU path
(scatter, replicate, parallel_apply, gather) is checked on a real CuPy device
only (marker ``gpu``); its pieces are also checked on CPU devices, where
``replicate`` must still send the gradients back to the original parameters.
"""
import numpy as np
import pytest

import edutorch
from edutorch import nn
from edutorch.nn.parallel import gather, parallel_apply, replicate, scatter

W = np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]], dtype=np.float32)
B = np.array([0.1, -0.2, 0.3], dtype=np.float32)
X = np.array([[1.0, 2.0], [-0.5, 0.5], [0.0, 3.0], [1.5, -1.0]], dtype=np.float32)


def model(T):
    m = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.Tanh(), T.nn.Dropout(0.0))
    m.load_state_dict({"0.weight": T.tensor(W), "0.bias": T.tensor(B)})
    return m


def observe(T):
    """What a CPU-only program sees of a DataParallel: keys, attributes, values, gradients."""
    m = model(T)
    dp = T.nn.DataParallel(m, device_ids=[0, 1], output_device=1)
    out = dp(T.tensor(X))
    out.sum().backward()
    plain = model(T)
    plain.load_state_dict({k.removeprefix("module."): v for k, v in dp.state_dict().items()})
    with T.profiler.profile() as prof:
        dp(T.tensor(X))
    return {
        "keys": list(dp.state_dict()),
        "device_ids": dp.device_ids,
        "attributes": [hasattr(dp, a) for a in ("output_device", "dim", "src_device_obj")],
        "module_is_wrapped": dp.module is m,
        "repr": repr(dp),
        "out": out.detach().numpy(),
        "grad": m[0].weight.grad.numpy(),
        "training": (dp.eval().module.training, dp.train().module[0].training),
        "reloaded": plain(T.tensor(X)).detach().numpy(),
        "named_parameters": [n for n, _ in dp.named_parameters()],
        "profiled": "DataParallel.forward" in [e.name for e in prof.events()],
    }


def test_without_gpus_it_is_a_wrapper():
    seen = observe(edutorch)
    assert seen["keys"] == ["module.0.weight", "module.0.bias"]
    assert seen["device_ids"] == [] and seen["attributes"] == [False, False, False]
    np.testing.assert_allclose(seen["out"], np.tanh(X @ W.T + B), rtol=1e-6)
    np.testing.assert_allclose(seen["reloaded"], seen["out"])
    assert seen["profiled"]


def test_without_gpus_as_pytorch(real_torch):
    mine, theirs = observe(edutorch), observe(real_torch)
    assert mine.keys() == theirs.keys()
    for key in theirs:
        if isinstance(theirs[key], np.ndarray):
            np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-5, atol=1e-6)  # float32 sums
        else:
            assert mine[key] == theirs[key], key


def test_functional_data_parallel_needs_a_device(real_torch):
    for T in (edutorch, real_torch):
        with pytest.raises(RuntimeError, match="^device type could not be determined$"):
            T.nn.parallel.data_parallel(model(T), T.tensor(X))


def test_distributed_data_parallel_is_out_of_scope():
    with pytest.raises(AttributeError, match="distributed training"):
        nn.parallel.DistributedDataParallel  # noqa: B018


def test_scatter_replicate_apply_gather_on_cpu_devices():
    """The GPU pipeline's pieces, with the CPU as every "device": values and gradients as one call."""
    m = model(edutorch)
    x = edutorch.tensor(X)
    devices = ["cpu", "cpu"]
    chunks = scatter((x,), devices)
    assert [tuple(c[0].shape) for c in chunks] == [(2, 2), (2, 2)]
    replicas = replicate(m, devices)
    assert replicas[0] is not m and replicas[0][0] is not m[0]  # same device: tensors shared, as PyTorch's device[0]
    out = gather(parallel_apply(replicas, chunks), "cpu")
    np.testing.assert_allclose(out.detach().numpy(), np.tanh(X @ W.T + B), rtol=1e-6)
    out.sum().backward()
    expected = edutorch.tensor(X, requires_grad=False)
    reference = model(edutorch)
    reference(expected).sum().backward()
    np.testing.assert_allclose(m[0].weight.grad.numpy(), reference[0].weight.grad.numpy(), rtol=1e-6)


def test_scatter_and_gather_nests():
    x = edutorch.arange(6.0).reshape(3, 2)
    parts = scatter({"x": x, "n": 4, "pair": (x, x)}, ["cpu", "cpu"])
    assert [p["n"] for p in parts] == [4, 4]
    assert parts[1]["pair"][0].tolist() == [[4.0, 5.0]]
    joined = gather([(p["x"], {"y": p["x"] * 2}) for p in parts], "cpu")
    assert joined[0].tolist() == x.tolist() and joined[1]["y"].tolist() == (x * 2).tolist()


@pytest.mark.gpu
def test_on_a_gpu_the_batch_runs_on_the_device():
    m = model(edutorch)
    dp = nn.DataParallel(m)
    assert dp.device_ids == list(range(edutorch.cuda.device_count())) and dp.output_device == 0
    out = dp(edutorch.tensor(X).cuda())
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.cpu().detach().numpy(), np.tanh(X @ W.T + B), rtol=1e-5)
    two = nn.DataParallel(model(edutorch).cuda(), device_ids=[0, 0])  # two replicas, scatter and gather
    out2 = two(edutorch.tensor(X).cuda())
    out2.sum().backward()
    np.testing.assert_allclose(out2.cpu().detach().numpy(), np.tanh(X @ W.T + B), rtol=1e-5)
    assert two.module[0].weight.grad is not None
