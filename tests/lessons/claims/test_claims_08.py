"""Lesson 08 (initialization, dtype, device): its sentences about PyTorch, checked under real PyTorch
2.13 (with PyTorch's own random weights, so the lesson's numbers are checked as the ranges it gives)."""
import inspect
import math

import numpy as np
import pytest
from _claims import error_of, real_torch

from edutorch.datasets import load_digits

torch = real_torch()
nn = torch.nn


def test_linear_default_is_kaiming_uniform_a_sqrt5_which_is_one_over_sqrt_fan_in():
    """"With ``a = √5`` the gain is ``√(1/3)``, so ``bound = ... = 1 / √fan_in``"; the bias "uses the
    same bound"; the reset_parameters source quoted in the lesson."""
    assert nn.init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    source = inspect.getsource(nn.Linear.reset_parameters)
    assert "init.kaiming_uniform_(self.weight, a=math.sqrt(5))" in source
    assert "bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0" in source
    torch.manual_seed(0)
    layer = nn.Linear(256, 64)
    bound = 1 / 16
    assert layer.weight.abs().max() <= bound and layer.weight.abs().max() > 0.99 * bound
    assert layer.bias.abs().max() <= bound
    assert layer.weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.03)


def test_conv2d_fan_in_is_channels_times_kernel_area():
    """"``in_channels × kernel height × kernel width`` for a ``Conv2d`` weight"."""
    conv = nn.Conv2d(3, 16, kernel_size=5)
    assert nn.init._calculate_fan_in_and_fan_out(conv.weight) == (75, 16 * 25)
    assert conv.weight.abs().max() <= 1 / math.sqrt(75)


def test_init_functions_work_in_place_without_a_graph_and_return_the_tensor():
    """"Every function of ``torch.nn.init`` with a trailing underscore fills a tensor **in place**,
    records no autograd graph (it runs under ``no_grad``), and returns the tensor"."""
    w = torch.empty(8, 8, requires_grad=True)
    for fill in (nn.init.uniform_, nn.init.normal_, nn.init.xavier_uniform_, nn.init.kaiming_normal_,
                 nn.init.orthogonal_, nn.init.zeros_, nn.init.eye_):
        assert fill(w) is w and w.grad_fn is None and w.is_leaf


def test_init_defaults_in_the_table():
    """The table's signatures: ``uniform_(t, a=0, b=1)``, ``normal_(t, mean=0, std=1)``,
    ``trunc_normal_(t, mean=0, std=1, a=-2, b=2)``, ``xavier_*_(t, gain=1)``,
    ``kaiming_*_(t, a=0, mode="fan_in", nonlinearity="leaky_relu")``, ``orthogonal_(t, gain=1)``,
    ``sparse_(t, sparsity, std=0.01)``, ``calculate_gain(nonlinearity, param=None)``."""
    def defaults(fn):
        return {k: p.default for k, p in inspect.signature(fn).parameters.items()
                if p.default is not inspect.Parameter.empty and k != "generator"}

    assert defaults(nn.init.uniform_) == {"a": 0.0, "b": 1.0}
    assert defaults(nn.init.normal_) == {"mean": 0.0, "std": 1.0}
    assert defaults(nn.init.trunc_normal_) == {"mean": 0.0, "std": 1.0, "a": -2.0, "b": 2.0}
    assert defaults(nn.init.xavier_uniform_) == defaults(nn.init.xavier_normal_) == {"gain": 1.0}
    for fn in (nn.init.kaiming_uniform_, nn.init.kaiming_normal_):
        assert defaults(fn) == {"a": 0, "mode": "fan_in", "nonlinearity": "leaky_relu"}
    assert defaults(nn.init.orthogonal_) == {"gain": 1}
    assert defaults(nn.init.sparse_) == {"std": 0.01}
    assert defaults(nn.init.calculate_gain) == {"param": None}


def test_calculate_gain_values():
    """"the gain is 5/3" for tanh, "√2 for ReLU"; the lesson's printed table."""
    gains = {name: nn.init.calculate_gain(name) for name in
             ["linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]}
    assert gains == {"linear": 1, "conv2d": 1, "sigmoid": 1, "tanh": pytest.approx(5 / 3),
                     "relu": pytest.approx(math.sqrt(2)), "leaky_relu": pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2))),
                     "selu": 0.75}
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / (1 + 0.2 ** 2)))


def test_init_stds_follow_their_formulas():
    """Xavier "std ``gain · √(2 / (fan_in + fan_out))``", Kaiming "std ``gain / √fan``" (``mode`` picks
    the fan); "The orthogonal matrix has orthonormal columns here (256 × 128), so ... its 256 entries
    have std ``1/√256``"; ``sparse_``: "a fraction ``sparsity`` of each column set to 0"."""
    torch.manual_seed(0)
    w = torch.empty(256, 128)
    checks = [(lambda: nn.init.xavier_uniform_(w), math.sqrt(2 / 384)),
              (lambda: nn.init.xavier_normal_(w, gain=5 / 3), 5 / 3 * math.sqrt(2 / 384)),
              (lambda: nn.init.kaiming_normal_(w, nonlinearity="relu"), math.sqrt(2 / 128)),
              (lambda: nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"), math.sqrt(2 / 256)),
              (lambda: nn.init.orthogonal_(w), 1 / 16)]
    for fill, std in checks:
        fill()
        assert w.std().item() == pytest.approx(std, rel=0.03)
    assert torch.allclose(w.T @ w, torch.eye(128), atol=1e-5)
    nn.init.sparse_(w, sparsity=0.25)
    assert ((w == 0).sum(0) == 64).all()


def test_eye_and_dirac_are_identities():
    """"``eye_(t)``, ``dirac_(t)`` | fixed values (identity matrix, identity convolution)"."""
    assert torch.equal(nn.init.eye_(torch.empty(3, 3)), torch.eye(3))
    conv = nn.Conv2d(2, 2, 3, padding=1, bias=False)
    nn.init.dirac_(conv.weight)
    x = torch.randn(1, 2, 5, 5)
    assert torch.allclose(conv(x), x)


@pytest.fixture(scope="module")
def runs():
    """Section 3's experiment, three seeds, PyTorch's own random weights."""
    x, y = load_digits("train")
    x, y = x.numpy(), y.numpy()
    xb, yb = torch.tensor((x[:256] - x.mean()) / x.std()), torch.tensor(y[:256])
    results = []
    for seed in range(3):
        run = {}
        for label, s in [("small", 0.5), ("kaiming", math.sqrt(2)), ("large", 2.0), ("default", None)]:
            torch.manual_seed(seed)
            layers = []
            for size in [64] + [128] * 9:
                layers += [nn.Linear(size, 128), nn.ReLU()]
            model = nn.Sequential(*layers, nn.Linear(128, 10))
            if s is not None:
                for m in model:
                    if isinstance(m, nn.Linear):
                        nn.init.normal_(m.weight, 0.0, s / math.sqrt(m.in_features))
                        nn.init.zeros_(m.bias)
            h, stds = xb, []
            for m in model:
                h = m(h)
                if isinstance(m, nn.ReLU):
                    stds.append(h.detach().std().item())
            nn.functional.cross_entropy(h, yb).backward()
            run[label] = np.array(stds), np.array([m.weight.grad.norm().item() for m in model if isinstance(m, nn.Linear)])
        results.append(run)
    return results


def test_too_small_init_vanishes(runs):
    """"after ten layers their std is about 2·10⁻⁵ (a few 10⁻⁵ ...)"; "the gradients of all layers
    are tiny, about 10⁻⁵ times Kaiming's"."""
    for run in runs:
        assert 1e-5 < run["small"][0][9] < 1e-4
        ratios = run["small"][1] / run["kaiming"][1]
        assert (1e-6 < ratios).all() and (ratios < 1e-4).all()


def test_too_large_init_explodes(runs):
    """"to a std of about 20 after ten layers (20 to 35), and the gradients are 50 to 80 times
    Kaiming's (40 to 80)"."""
    for run in runs:
        assert 15 < run["large"][0][9] < 40
        ratios = run["large"][1] / run["kaiming"][1]
        assert (30 < ratios).all() and (ratios < 90).all()


def test_kaiming_keeps_the_scale_and_the_default_shrinks_it(runs):
    """"**Kaiming** keeps the std of the activations roughly constant (... 0.5 to 1.2 over seeds)";
    "**PyTorch's default** ... shrinks the activations"; "Its gradients shrink from the output
    (2·10⁻²) to the first layer (2·10⁻⁴)"."""
    for run in runs:
        assert (0.45 < run["kaiming"][0]).all() and (run["kaiming"][0] < 1.25).all()
        stds, grads = run["default"]
        assert stds[9] < stds[0] / 5
        assert 5e-3 < grads[-1] < 5e-2 and 5e-5 < grads[0] < 5e-4


def test_apply_visits_children_first_and_returns_the_model():
    """"``model.apply(fn)`` calls ``fn(m)`` on **every** submodule ``m`` — the children first,
    recursively, then the module itself — and returns the model"."""
    visited = []
    small = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 2)))
    assert small.apply(lambda m: visited.append(type(m).__name__)) is small
    assert visited == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]


def test_skip_init_needs_a_device_argument():
    """"The module class must accept a ``device`` argument"; PyTorch "creates it on the ``"meta"``
    device ..., then gives it real but *uninitialised* memory with ``to_empty``"."""
    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(n))

    error = error_of(nn.utils.skip_init, NoDevice, 3)
    assert isinstance(error, RuntimeError) and str(error) == "Module must support a 'device' arg to skip initialization"
    source = inspect.getsource(nn.utils.skip_init)
    assert 'kwargs["device"] = "meta"' in source and ".to_empty(device=final_device)" in source
    layer = nn.utils.skip_init(nn.Linear, 64, 64)
    assert layer.weight.device.type == "cpu" and layer.weight.shape == (64, 64)


def test_orthogonal_keeps_lengths_rotation_or_reflection():
    """"An **orthogonal** weight (``W Wᵀ = I``) is a rotation, or a rotation and a reflection
    (``det W = -1``, about half of ``orthogonal_``'s draws): it changes the direction of a vector but
    never its length"."""
    dets = []
    for seed in range(40):
        torch.manual_seed(seed)
        w = nn.init.orthogonal_(torch.empty(8, 8))
        x = torch.randn(8)
        assert torch.allclose((w @ x).norm(), x.norm(), rtol=1e-5)
        dets.append(torch.linalg.det(w).item())
    negative = np.mean(np.array(dets) < 0)
    assert 0.25 < negative < 0.75
    assert np.allclose(np.abs(dets), 1, atol=1e-5)


def test_module_to_converts_in_place_tensor_to_returns_new():
    """"``Module.to`` ... changes the module **in place** and returns the module itself, while
    ``Tensor.to`` returns a **new** tensor (or the same tensor, when nothing changes)"; "integer
    buffers such as BatchNorm's ``num_batches_tracked`` stay integers"; the default dtype is
    ``torch.float32``."""
    assert torch.get_default_dtype() == torch.float32
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    weight = net[0].weight
    assert net.double() is net and net[0].weight is weight and weight.dtype == torch.float64
    assert net[1].num_batches_tracked.dtype == torch.int64
    assert net.half() is net and net[1].running_mean.dtype == torch.float16
    t32 = torch.ones(2)
    assert t32.to(torch.float32) is t32 and t32.to(torch.float64) is not t32 and t32.dtype == torch.float32


def test_a_float64_batch_into_a_float32_layer_is_an_error():
    """"a float64 batch into a float32 layer is an error, not an automatic conversion"."""
    error = error_of(nn.Linear(2, 3), torch.ones(4, 2, dtype=torch.float64))
    assert isinstance(error, RuntimeError) and "mat1 and mat2 must have the same dtype" in str(error)


def test_finfo_limits_and_element_size():
    """"float16 has only 10 bits after the binary point and a largest value of 65504"; the printed
    ``finfo`` table; ``element_size()`` is the bytes per number."""
    f16 = torch.finfo(torch.float16)
    assert (f16.eps, f16.max, f16.tiny) == (2.0 ** -10, 65504.0, 2.0 ** -14)
    assert torch.finfo(torch.float32).eps == 2.0 ** -23 and torch.finfo(torch.float64).eps == 2.0 ** -52
    assert [torch.ones(1, dtype=d).element_size() for d in (torch.float16, torch.float32, torch.float64)] == [2, 4, 8]


def test_float16_rounding_overflow_and_underflow():
    """"``0.1`` is stored as ``0.0999755859375`` (in float32: ``0.100000001490116``)"; "``2049``
    becomes ``2048``; ``70000`` ... becomes ``inf``; ``1e-8`` ... becomes ``0``; and ``1 + 1e-4`` is
    ``1``"."""
    half = torch.tensor([0.1, 2049.0, 70000.0, 1e-8, 1.0 + 1e-4], dtype=torch.float64).half()
    assert half.tolist() == [0.0999755859375, 2048.0, float("inf"), 0.0, 1.0]
    assert f"{torch.tensor(0.1).item():.15f}" == "0.100000001490116"


def test_float16_running_sum_stalls_at_256():
    """"The running sum stops at 256: there the gap between float16 numbers is 0.25, and adding 0.1
    (less than half a gap) rounds back to the same number"."""
    total = torch.zeros((), dtype=torch.float16)
    for _ in range(3000):
        total += 0.1
    assert total.item() == 256.0
    assert (torch.tensor(256.25, dtype=torch.float16) - torch.tensor(256.0, dtype=torch.float16)).item() == 0.25


def test_float32_and_float16_outputs_against_float64():
    """"A network's float32 output differs from the float64 one in about the 7th significant digit,
    the float16 one in about the 3rd or 4th"."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 10))
    xb = torch.randn(256, 64)
    out32 = net(xb)
    out64 = net.double()(xb.double())
    out16 = net.half()(xb.half())

    def relative(out):
        return ((out.double() - out64).abs().max() / out64.abs().max()).item()

    assert 1e-8 < relative(out32) < 1e-6 and 1e-5 < relative(out16) < 1e-2


def test_devices_one_per_operation_except_zero_dim_cpu_tensors():
    """"every operation needs all its tensors on **one** device ... Mixing them is an error — with one
    exception in PyTorch: a 0-d CPU tensor ... may join tensors on the GPU" (shown here with the
    ``meta`` device, which follows the same rule); factory functions and layers "take ``device=``
    (and ``dtype=``) and create their tensors right there"."""
    other = torch.ones(3, device="meta")
    assert (other + torch.tensor(2.0)).device.type == "meta"
    error = error_of(lambda: other + torch.tensor([2.0]))
    assert isinstance(error, RuntimeError) and "device" in str(error)
    layer = nn.Linear(4, 3, device="meta", dtype=torch.float64)
    assert layer.weight.device.type == "meta" and layer.weight.dtype == torch.float64


def test_cuda_without_a_gpu():
    """"``torch.cuda.is_available()`` says whether a GPU can be used"; on a build without CUDA
    ``.to('cuda')`` raises ``AssertionError: Torch not compiled with CUDA enabled``."""
    if torch.cuda.is_available() or torch.version.cuda is not None:
        pytest.skip("this PyTorch has CUDA: the no-GPU message is not shown")
    error = error_of(torch.zeros(3).to, "cuda")
    assert isinstance(error, AssertionError) and str(error).startswith("Torch not compiled with CUDA enabled")


def test_deeper_or_larger_initialisation_overflows_float32():
    """"Deeper, or with a larger ``s``, float32 overflows: the activations become ``inf`` and ``nan``
    (*exploding*)"."""
    torch.manual_seed(0)
    h = torch.randn(16, 128)
    for _ in range(100):
        layer = nn.Linear(128, 128)
        nn.init.normal_(layer.weight, 0.0, 4 / math.sqrt(128))
        nn.init.zeros_(layer.bias)
        h = torch.relu(layer(h))
    assert not h.isfinite().any()
