"""Checks of lesson 08 · Initialization, dtype and device (lessons/08-initialization-dtype-device.ipynb)."""

import math

import numpy as np

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _library_of_function,
    _values,
    exercise,
)


def _dtype_name(tensor):
    """``"float64"`` for ``torch.float64`` (edutorch or torch)."""
    return str(tensor.dtype).replace("torch.", "")


def _device_type(tensor):
    """``"cpu"`` or ``"cuda"``: the device's type, without an index."""
    return str(tensor.device).split(":")[0]


@exercise
def exercise_8_1(layer):
    """``layer.weight`` from Xavier uniform with tanh's gain (5/3); ``layer.bias`` all zeros."""
    lib = _library(layer)
    if not isinstance(layer, lib.nn.Linear):
        return _hint("pass the nn.Linear layer you re-initialised: checks.exercise_8_1(layer)")
    fan_out, fan_in = layer.weight.shape
    gain = lib.nn.init.calculate_gain("tanh")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))  # xavier_uniform_: U(-bound, bound)
    w = _values(layer.weight)
    largest, std = float(np.abs(w).max()), float(w.std())
    default = 1 / math.sqrt(fan_in)
    if largest <= default * (1 + 1e-6) and std < 0.7 * default:
        return _hint("the weight still has PyTorch's default values, U(-1/√fan_in, 1/√fan_in): call "
                     "nn.init.xavier_uniform_(layer.weight, gain=...)")
    plain = bound / gain
    if largest <= plain * (1 + 1e-6) and largest > 0.9 * plain:
        return _hint("that is Xavier uniform with gain 1: pass gain=nn.init.calculate_gain('tanh')")
    if largest > bound * (1 + 1e-6):
        return _hint(f"|weight| reaches {largest:.3g}, beyond Xavier's bound gain·√(6/(fan_in+fan_out)) = "
                     f"{bound:.3g}: use xavier_uniform_ (not kaiming or normal) with gain=calculate_gain('tanh')")
    uniform = largest > 0.97 * std * math.sqrt(3) and abs(std * math.sqrt(3) / largest - 1) < 0.04
    if uniform and largest < 0.97 * bound:
        return _hint(f"that is Xavier uniform with gain {std * math.sqrt(3) / plain:.2g}, not tanh's: pass "
                     f"gain=nn.init.calculate_gain('tanh') ({gain:.4g})")
    if not (largest > 0.98 * bound and abs(std - bound / math.sqrt(3)) < 0.03 * bound / math.sqrt(3)):
        return _hint(f"the weight's values are not spread over U(-{bound:.3g}, {bound:.3g}) (std "
                     f"{std:.3g}, expected {bound / math.sqrt(3):.3g}): use nn.init.xavier_uniform_")
    if layer.bias is None or np.any(_values(layer.bias) != 0):
        return _hint("the weight is right; now set the bias to zero: nn.init.zeros_(layer.bias)")
    return _correct(f"Xavier uniform with gain {gain:.4g}: bound {bound:.4f}, std {std:.4f}; bias 0")


def _deep_relu_for_check(lib, depth=8, width=128):
    nn = lib.nn
    layers, size = [], 48
    for _ in range(depth):
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, 10))


@exercise
def exercise_8_2(init_weights):
    """``init_weights(m)``: Kaiming normal (fan_in, relu) for every Linear weight, zero bias, nothing
    else touched; the check applies it with ``Module.apply`` to a deep ReLU network."""
    if not callable(init_weights):
        return _hint("pass your function init_weights itself: checks.exercise_8_2(init_weights)")
    lib = _library_of_function(init_weights)
    lib.manual_seed(0)
    model = _deep_relu_for_check(lib)
    try:
        model.apply(init_weights)
    except Exception as error:
        return _hint(f"model.apply(init_weights) raised {type(error).__name__}: {error}. apply calls "
                     "init_weights on EVERY module (ReLU, Sequential, ...): change only those where "
                     "isinstance(m, nn.Linear)")
    linears = [m for m in model if isinstance(m, lib.nn.Linear)]
    for i, m in enumerate(linears):
        fan_in = m.weight.shape[1]
        want = math.sqrt(2.0 / fan_in)
        w = _values(m.weight)
        std = float(w.std())
        if abs(std - want) > 0.08 * want:
            if np.abs(w).max() <= 1 / math.sqrt(fan_in) * (1 + 1e-6):
                return _hint("the weights still look like PyTorch's default (|w| ≤ 1/√fan_in): does "
                             "init_weights change m.weight when m is an nn.Linear?")
            if abs(std - math.sqrt(2.0 / m.weight.shape[0])) < 0.08 * math.sqrt(2.0 / m.weight.shape[0]):
                return _hint("the std is √(2/fan_out): use mode='fan_in' (the default)")
            if abs(std - 1 / math.sqrt(fan_in)) < 0.08 / math.sqrt(fan_in):
                return _hint("the std is 1/√fan_in, the gain of 'linear': pass nonlinearity='relu' "
                             "(gain √2)")
            return _hint(f"layer {i}'s weight has std {std:.3g}; Kaiming for ReLU gives √(2/fan_in) = "
                         f"{want:.3g}: nn.init.kaiming_normal_(m.weight, nonlinearity='relu')")
        if np.abs(w).max() <= math.sqrt(3.0) * want * (1 + 1e-6) and w.size > 1000:
            return _hint("the weights are uniform (kaiming_uniform_): the exercise asks for Kaiming "
                         "NORMAL, nn.init.kaiming_normal_")
        if m.bias is not None and np.any(_values(m.bias) != 0):
            return _hint("the weights are right, but the biases are not zero: nn.init.zeros_(m.bias)")
    rng = np.random.default_rng(3)
    h = lib.tensor(rng.normal(size=(128, 48)).astype(np.float32))
    stds = []
    with lib.no_grad():
        for m in model:
            h = m(h)
            if isinstance(m, lib.nn.ReLU):
                stds.append(float(_values(h).std()))
    ratio = stds[-1] / stds[0]
    if not 0.25 < ratio < 4:
        return _hint(f"the activations change by {ratio:.2g}× over {len(stds)} layers: check the init")
    return _correct(f"{len(linears)} Linear layers at std √(2/fan_in), biases 0; the activations' std "
                    f"goes from {stds[0]:.2f} (layer 1) to {stds[-1]:.2f} (layer {len(stds)})")


@exercise
def exercise_8_3(rotation):
    """``rotation``: a 64×64 ``nn.Linear`` with an orthogonal weight (W Wᵀ = I) and a zero bias."""
    if rotation is None:
        return _hint("rotation is None: rotation = nn.utils.skip_init(nn.Linear, 64, 64), then "
                     "nn.init.orthogonal_(rotation.weight) and nn.init.zeros_(rotation.bias)")
    lib = _library(rotation)
    if not isinstance(rotation, lib.nn.Linear):
        return _hint(f"rotation is a {type(rotation).__name__}: build an nn.Linear(64, 64) with skip_init")
    if tuple(rotation.weight.shape) != (64, 64):
        return _hint(f"the weight has shape {tuple(rotation.weight.shape)}: use nn.Linear(64, 64)")
    w = _values(rotation.weight)
    if not np.all(np.isfinite(w)):
        return _hint("the weight holds inf or nan: skip_init leaves uninitialised memory, so "
                     "initialise it: nn.init.orthogonal_(rotation.weight)")
    gram = w @ w.T
    scale = float(np.mean(np.diag(gram)))
    if np.allclose(gram, scale * np.eye(64), atol=1e-4 * max(scale, 1)) and not math.isclose(scale, 1, rel_tol=1e-4):
        return _hint(f"W Wᵀ = {scale:.3g}·I: orthogonal, but scaled; use gain 1 (the default)")
    if not np.allclose(gram, np.eye(64), atol=1e-4):
        return _hint("W Wᵀ is not the identity: give the weight orthogonal values with "
                     "nn.init.orthogonal_(rotation.weight)")
    if rotation.bias is None or np.any(_values(rotation.bias) != 0):
        return _hint("the weight is orthogonal; the bias must be zero too (skip_init left it "
                     "uninitialised): nn.init.zeros_(rotation.bias)")
    x = np.random.default_rng(4).normal(size=(16, 64))
    kept = np.linalg.norm(x @ w.T) / np.linalg.norm(x)
    return _correct(f"W Wᵀ = I, bias 0: one layer multiplies a batch's norm by {kept:.6f}")


@exercise
def exercise_8_4(net32, net64, out64, x):
    """``net64`` a float64 copy of ``net32`` (still float32), ``out64 = net64(x)`` in float64."""
    if net64 is None or not hasattr(net64, "parameters"):
        return _hint("net64 is missing: copy.deepcopy(net32), then convert the copy with .double()")
    lib = _library(net32)
    original = {name: _dtype_name(p) for name, p in net32.named_parameters()}
    if net64 is net32:
        return _hint("net64 IS net32: Module.double() converts in place and returns the same module; "
                     "convert a copy: copy.deepcopy(net32).double()")
    if set(original.values()) != {"float32"}:
        return _hint(f"net32 is now {sorted(set(original.values()))}: the conversion changed the "
                     "original. Module.double() works in place, so convert a copy (copy.deepcopy)")
    converted = {name: _dtype_name(p) for name, p in net64.named_parameters()}
    if sorted(converted) != sorted(original):
        return _hint("net64 does not have net32's parameters: make it with copy.deepcopy(net32)")
    if set(converted.values()) != {"float64"}:
        return _hint(f"net64's parameters are {sorted(set(converted.values()))}: convert it with "
                     ".double() or .to(torch.float64)")
    params64 = dict(net64.named_parameters())
    for name, p in net32.named_parameters():
        if not np.array_equal(_values(p), _values(params64[name])):
            return _hint(f"net64.{name} has other values than net32.{name}: copy the network "
                         "(copy.deepcopy), do not build a new one")
    if out64 is None or not _is_tensor(out64):
        return _hint("out64 is missing: out64 = net64(xb.double())")
    if _dtype_name(out64) != "float64":
        return _hint(f"out64 is {_dtype_name(out64)}: compute it with net64 on the float64 batch, "
                     "xb.double()")
    with lib.no_grad():
        expected = _values(net64(x.to(lib.float64)))
    if _values(out64).shape != expected.shape or not np.allclose(_values(out64), expected, rtol=1e-12,
                                                                 atol=1e-12):
        return _hint("out64 is not net64's output on the whole batch xb (in float64)")
    with lib.no_grad():
        low = _values(net32(x.to(lib.float32)))
    difference = float(np.abs(low - expected).max() / np.abs(expected).max())
    return _correct(f"net32 still float32, net64 float64 with the same values; the float32 output "
                    f"differs by {difference:.1e} of the largest output")


def _no_random_numbers_since_seed_0(lib):
    """Is the global generator still where ``manual_seed(0)`` put it?  The answer cell seeds it
    just before building the layer, and PyTorch's default init draws from it; skip_init does not."""
    state = lib.get_rng_state()
    lib.manual_seed(0)
    seeded = lib.get_rng_state()
    lib.set_rng_state(state)
    return np.array_equal(_values(state), _values(seeded))


@exercise
def exercise_8_5(head, out, x, device):
    """``head``: ``nn.Linear(64, 10)`` made in float64 on ``device`` with the default init; ``out``:
    its output on ``x`` moved to that device and dtype."""
    if head is None:
        return _hint("head is None: nn.Linear(64, 10, device=device, dtype=torch.float64)")
    lib = _library(head)
    if not isinstance(head, lib.nn.Linear) or (head.in_features, head.out_features) != (64, 10):
        return _hint("head must be an nn.Linear(64, 10)")
    dtypes = {_dtype_name(p) for p in head.parameters()}
    if dtypes != {"float64"}:
        return _hint(f"head's parameters are {sorted(dtypes)}: pass dtype=torch.float64 to nn.Linear")
    devices = {_device_type(p) for p in head.parameters()}
    if devices != {str(device).split(":")[0]}:
        return _hint(f"head's parameters are on {sorted(devices)}, not on {device!r}: pass "
                     "device=device to nn.Linear")
    if _no_random_numbers_since_seed_0(lib):
        return _hint("head's parameters were never initialised: nothing drew random numbers after the "
                     "cell's manual_seed(0), as with skip_init (uninitialised memory). Keep the default "
                     "init: nn.Linear(64, 10, device=device, dtype=torch.float64)")
    bound = 1 / math.sqrt(64)
    values = np.concatenate([_values(p).ravel() for p in head.parameters()])
    if np.array_equal(values.astype(np.float32).astype(np.float64), values):
        return _hint("every value of head is a float32 number: the layer was made in float32 and "
                     "converted (.double(), .to(...)), which the exercise forbids. Make it directly: "
                     "nn.Linear(64, 10, device=device, dtype=torch.float64)")
    if not np.all(np.isfinite(values)) or np.abs(values).max() > bound * (1 + 1e-9) or values.std() < 0.3 * bound:
        return _hint("the parameters are not PyTorch's default U(-1/√64, 1/√64): build the layer with "
                     "nn.Linear(..., device=device, dtype=...), not skip_init, and do not re-initialise it")
    if out is None or not _is_tensor(out):
        return _hint("out is missing: out = head(xb.to(device=device, dtype=torch.float64))")
    if _dtype_name(out) != "float64" or _device_type(out) != str(device).split(":")[0]:
        return _hint(f"out is {_dtype_name(out)} on {out.device}: move the batch with "
                     "xb.to(device=device, dtype=torch.float64) before calling head")
    with lib.no_grad():
        expected = _values(head(x.to(device=device, dtype=lib.float64)))
    if _values(out).shape != expected.shape or not np.allclose(_values(out), expected, rtol=1e-12,
                                                               atol=1e-12):
        return _hint("out is not head's output on the whole batch xb")
    return _correct(f"Linear(64, 10) made in float64 on {device}, default init (|w| ≤ 1/8); "
                    f"output {tuple(out.shape)} float64 on {device}")
