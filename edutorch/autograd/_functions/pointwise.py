"""Element-wise ops and their gradients: arithmetic, exp/log, activations.

Binary ops broadcast like NumPy; in backward, ``grad_for`` sums the gradient
back over the broadcast dimensions (``sum_to_size``) so that it has the
input's shape again.
"""
import numpy as np

from ..function import Function
from .._saved_attrs import Saved
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from . import fused
from .tangents import auto_element_wise, auto_linear, sum_tangents
from .utils import binary_arrays, broadcast_error, check_sub, grad_for, input_meta, quiet_fp
from ..._dtype import is_floating as _is_floating
from ... import _dtype


def _binary_meta(ctx, a, b, out):
    needs = ctx.needs_input_grad
    if not (needs[0] or needs[1]):
        return  # no graph node: backward will never read ctx.meta
    ctx.meta = (input_meta(a, out.shape, out.dtype), input_meta(b, out.shape, out.dtype))


class Add(Function):
    """``a + alpha * b``."""

    _backward_name = "AddBackward0"
    _number_operands = 2  # a Python-number operand gets a (None, 0) edge, as in PyTorch
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha}  # grad_fn._saved_alpha (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        x, y = binary_arrays(a, b)
        try:
            out = x + y if alpha == 1 else x + _utils.scalar_for(alpha, y) * y
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out)
        ctx.alpha = alpha
        return out

    @staticmethod
    def backward(ctx, grad):
        ma, mb = ctx.meta
        needs = ctx.needs_input_grad
        ga = grad_for(grad, ma) if needs[0] else None
        gb = None
        if needs[1]:
            gb = grad_for(grad if ctx.alpha == 1 else grad * ctx.alpha, mb)
        return ga, gb, None

    jvp = auto_linear(0, 1)  # da + alpha * db


class Sub(Function):
    """``a - alpha * b``."""

    _backward_name = "SubBackward0"
    _number_operands = 2  # a Python-number operand gets a (None, 0) edge, as in PyTorch
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha}  # grad_fn._saved_alpha (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        check_sub(a, b)
        x, y = binary_arrays(a, b)
        try:
            out = x - y if alpha == 1 else x + _utils.scalar_for(_utils.negated_alpha(alpha), y) * y
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out)
        ctx.alpha = alpha
        return out

    @staticmethod
    def backward(ctx, grad):
        ma, mb = ctx.meta
        needs = ctx.needs_input_grad
        ga = grad_for(grad, ma) if needs[0] else None
        gb = None
        if needs[1]:  # -grad costs an op: only when b needs it
            gb = grad_for(-grad if ctx.alpha == 1 else grad * -ctx.alpha, mb)
        return ga, gb, None

    jvp = auto_linear(0, 1)  # da - alpha * db


class RSub(Function):
    """``b - alpha * a`` (Python number on the left: ``2 - x``)."""

    _backward_name = "RsubBackward1"
    _saved_attrs = {"alpha": lambda ctx: ctx.alpha}  # grad_fn._saved_alpha (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        check_sub(a, b)
        x, y = binary_arrays(a, b)
        ctx.alpha = alpha
        return y - x if alpha == 1 else y - _utils.scalar_for(alpha, x) * x

    @staticmethod
    def backward(ctx, grad):
        return -grad if ctx.alpha == 1 else grad * -ctx.alpha, None, None

    jvp = auto_linear(0, 1)  # -alpha * da


class Mul(Function):
    """``a * b``; d/da = b, d/db = a."""

    _backward_name = "MulBackward0"
    _number_operands = 2  # a Python-number operand gets a (None, 0) edge, as in PyTorch
    _saved_attrs = {"self": Saved(0), "other": Saved(1)}  # grad_fn._saved_self, ... (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        try:
            out = x * y
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out)
        # save only what backward will read, so ``x.mul_(2)`` stays differentiable
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[0] else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad * b, ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(grad * a, mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        return sum_tangents(da * b if da is not None else None, a * db if db is not None else None)


class Div(Function):
    """``a / b`` (true division); d/da = 1/b, d/db = -a/b²."""

    _backward_name = "DivBackward0"
    _number_operands = 2  # a Python-number operand gets a (None, 0) edge, as in PyTorch
    _saved_attrs = {"self": Saved(0), "other": Saved(1)}

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        if not _is_floating(x.dtype):  # true division of integers gives the default float
            dt = _dtype.get_default_dtype().np
            # (a Python int by its value: binary_arrays wrapped 2**63 into int64's bits)
            x, y = (dt.type(v) if type(v) is int else arr.astype(dt) for v, arr in ((a, x), (b, y)))
        try:
            with quiet_fp():
                out = x / y
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad / b, ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(-grad * a / (b * b), mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        return sum_tangents(da / b if da is not None else None, -db * a / (b * b) if db is not None else None)


def rounded_quotient(a, b, mode):
    """The array ``a / b`` rounded toward ``-inf`` (``mode='floor'``) or 0 (``'trunc'``)."""
    if mode not in ("floor", "trunc"):
        raise ValueError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + str(mode) + "'"
        )
    x, y = binary_arrays(a, b)
    if x.dtype.kind in "biu":
        _utils.check_integer_divisor(x, y, f"div_{mode}_cpu")
        return np.floor_divide(x, y) if mode == "floor" else np.trunc(np.true_divide(x, y)).astype(x.dtype)
    try:  # floor: as Python's and PyTorch's ``div_floor_floating``, from fmod (2.0 // 0.4 is 4.0, not 5.0)
        with quiet_fp():  # x / 0 is inf or nan for floats, silently
            return np.asarray(np.floor_divide(x, y) if mode == "floor" else np.trunc(x / y))
    except ValueError:
        raise broadcast_error(x, y) from None


class DivRounded(Function):
    """``div(a, b, rounding_mode='floor'|'trunc')``: a step function, so both gradients are zero.

    PyTorch still records it (``DivBackward2``, the result requires grad) and its formula names
    each operand in the other's gradient, so it saves ``b`` when ``a`` needs a gradient and ``a``
    when ``b`` does: a later in-place write to one of them refuses backward."""

    _backward_name = "DivBackward2"
    _number_operands = 2  # a Python-number operand gets a (None, 0) edge, as in PyTorch

    @staticmethod
    def forward(ctx, a, b, mode):
        out = rounded_quotient(a, b, mode)
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        ctx.inputs = tuple((t._data.shape, t._data.dtype) if isinstance(t, _utils._Tensor) else None
                           for t in (a, b))
        return out

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # noqa: B018 - checks that neither was written since (PyTorch unpacks them)
        zeros = [_utils._Tensor._make(np.zeros(*meta)) if meta and need else None
                 for meta, need in zip(ctx.inputs, ctx.needs_input_grad)]
        return zeros[0], zeros[1], None

    @staticmethod
    def jvp(ctx, *tangents):
        return ctx.result.new_zeros(ctx.result.shape)  # PyTorch: result.new_zeros(result.sizes())


class Neg(Function):
    _backward_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype.kind == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                "to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return -a._data

    @staticmethod
    def backward(ctx, grad):
        return -grad

    jvp = auto_linear(0)


class Pow(Function):
    """``a ** exponent``, exponent a Python number: d/da = exponent * a**(exponent-1)."""

    _backward_name = "PowBackward0"
    _autocast_op = "pow"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0), "exponent": lambda ctx: ctx.exponent}

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        x, e = binary_arrays(a, exponent)
        if x.dtype.kind == "b":  # bool ** bool stays bool in PyTorch (NumPy would give int8)
            return (x.astype(np.int8) ** e).astype(bool)
        if type(exponent) is int and exponent >= 0:
            return x ** e  # cannot divide by zero or leave the reals (overflow aside)
        with quiet_fp():  # 0 ** -1, (-1) ** 0.5
            return x ** e

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        if ctx.exponent == 0:
            return grad.new_zeros(grad.shape), None  # a constant: no graph back to a (as PyTorch)
        return fused.pow_backward(grad, a, ctx.exponent), None  # grad * e * a**(e-1) as one op

    jvp = auto_element_wise  # (tangents.py: backward with the tangent as the gradient)


class Exp(Function):
    _backward_name = "ExpBackward0"
    _autocast_op = "exp"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):

        out = _utils._Tensor._make(np.exp(a._data))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out

    jvp = auto_element_wise


class Log(Function):
    _backward_name = "LogBackward0"
    _autocast_op = "log"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with quiet_fp():  # log(0) = -inf, log(-1) = nan
            return np.log(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / a

    jvp = auto_element_wise


class Tanh(Function):
    _backward_name = "TanhBackward0"
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):

        out = _utils._Tensor._make(np.tanh(a._data))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return fused.tanh_backward(grad, out)  # grad * (1 - out²) as one op

    jvp = auto_element_wise


class Sigmoid(Function):
    _backward_name = "SigmoidBackward0"
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):

        x = a._data
        # 1 / (1 + exp(-x)) overflows for very negative x; this form does not
        out = _utils._Tensor._make(np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return fused.sigmoid_backward(grad, out)  # grad * out * (1 - out) as one op

    jvp = auto_element_wise


class Relu(Function):
    _backward_name = "ReluBackward0"
    _saved_attrs = {"result": Saved(0)}

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        out = _utils._Tensor._make(np.maximum(a._data, 0))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return fused.threshold_backward(grad, out, 0)  # grad where out > 0, as one op

    jvp = auto_element_wise


class PowTensor(Function):
    """``a ** b`` with a tensor exponent: d/da = b a^(b-1), d/db = a^b log(a)."""

    _backward_name = "PowBackward1"
    _autocast_op = "pow"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0), "exponent": Saved(1), "result": Saved(2)}

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        _utils.refuse_bool(x, "pow")
        try:
            with quiet_fp():
                out = _utils.integer_power(x, y) if x.dtype.kind in "iu" else x ** y
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out)
        out = _utils._Tensor._make(out)
        ctx.save_for_backward(a, b, out)  # PyTorch saves the result too (d/db = result * log a)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad * b * a ** (b - 1), ma) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            # a^b log(a); at a == 0 PyTorch takes the limit 0
            log_a = a.log().masked_fill(a == 0, 0)
            gb = grad_for(grad * out * log_a, mb)
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        d_base = da * b * a ** (b - 1) if da is not None else None
        d_exponent = db * ctx.result * a.log().masked_fill(a == 0, 0) if db is not None else None
        return sum_tangents(d_base, d_exponent)


class RPow(Function):
    """``base ** b`` with a Python number as base (``2 ** x``): d/db = base^b log(base)."""

    _backward_name = "PowBackward2"
    _autocast_op = "pow"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": lambda ctx: ctx.base, "exponent": Saved(0), "result": Saved(1)}

    @staticmethod
    def forward(ctx, b, base):
        y, x = binary_arrays(b, base)
        with quiet_fp():
            out = _utils.integer_power(x, y) if y.dtype.kind in "iu" else x ** y
        ctx.base = base

        out = _utils._Tensor._make(out)
        ctx.save_for_backward(b, out)  # PyTorch saves the exponent too
        return out

    @staticmethod
    def backward(ctx, grad):
        _, out = ctx.saved_tensors
        if ctx.base == 0:
            return grad * 0, None
        with quiet_fp():  # log of a negative base is nan, silently
            log_base = float(np.log(ctx.base))
        return grad * out * log_base, None

    jvp = auto_element_wise


class Remainder(Function):
    """``a % b`` with the sign of ``b`` (Python's rule); d/da = 1, d/db = -floor(a / b)."""

    _backward_name = "RemainderBackward1"

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        if x.dtype.kind in "biu":
            _utils.check_integer_divisor(x, y, "remainder_cpu")
        try:
            with quiet_fp():  # x % 0 is nan for floats, silently
                out = np.remainder(x, y)
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[1] else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ma, mb = ctx.meta
        ga = grad_for(grad, ma) if ctx.needs_input_grad[0] else None
        gb = grad_for(-grad * (a / b).floor(), mb) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        return sum_tangents(da, -db * (a / b).floor() if db is not None else None)


class RemainderScalar(Remainder):
    """``a % 2`` (a Python number on the right)."""

    _backward_name = "RemainderBackward0"


class Copysign(Function):
    """``copysign(a, b)``: ``|a|`` with the sign of ``b`` (-0.0 counts as negative).

    d/da = result / a (±1, and 0 where a == 0); d/db = 0 (PyTorch's ``zeros_like(other)``).  As
    PyTorch's node, it keeps ``a`` and the result when ``a`` needs a gradient."""

    _backward_name = "CopysignBackward0"
    _number_operands = 2  # a Python-number operand gets a (None, 0) edge, as in PyTorch
    _saved_attrs = {"self": Saved(0), "result": Saved(1)}

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        try:
            out = _utils._Tensor._make(np.asarray(np.copysign(x, y)))
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, a, b, out._data)
        ctx.save_for_backward(*((a, out) if ctx.needs_input_grad[0] else ()))
        return out

    @staticmethod
    def backward(ctx, grad):
        ma, mb = ctx.meta
        needs = ctx.needs_input_grad
        ga = gb = None
        if needs[0]:
            ga = grad_for(grad * Copysign.derivative(*ctx.saved_tensors), ma)
        if needs[1]:
            shape, dtype = mb or (grad.shape, grad._data.dtype)
            gb = _utils._Tensor._make(np.zeros(shape, dtype))
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        """PyTorch's: ``self_t * (result / self)``, 0 where ``self == 0``; ``other``'s tangent adds nothing
        (with only ``other`` dual, no tangent at all, as in PyTorch)."""
        if da is None:
            return None
        return da * Copysign.derivative(ctx.primals[0], ctx.result)

    @staticmethod
    def derivative(a, out):
        """d copysign(a, b) / da = result / a: ±1, and 0 where a == 0 (PyTorch's formula)."""
        return (out / a).masked_fill(a == 0, 0)


class CopysignScalar(Copysign):
    """``copysign(a, 2.0)`` (a Python number for the sign)."""

    _backward_name = "CopysignBackward1"


class Lerp(Function):
    """``start + weight * (end - start)`` with a number weight; d/dstart = 1-w, d/dend = w."""

    _backward_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, start, end, weight):
        _check_lerp_dtype(start, end, "end")
        x, y = binary_arrays(start, end)
        try:
            out = x + weight * (y - x)
        except ValueError:
            raise broadcast_error(x, y) from None
        _binary_meta(ctx, start, end, out)
        ctx.weight = weight
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        ma, mb = ctx.meta
        return grad_for(grad * (1 - ctx.weight), ma), grad_for(grad * ctx.weight, mb), None

    jvp = auto_linear(0, 1)  # lerp(d_start, d_end, weight)


class LerpTensor(Function):
    """``lerp(start, end, weight)`` with a tensor weight (PyTorch's ``lerp.Tensor``, ``LerpBackward1``):
    d/dstart = 1 - weight, d/dend = weight, d/dweight = end - start; the three broadcast together.

    The weight is saved when start or end needs a gradient, start and end when the weight does."""

    _backward_name = "LerpBackward1"

    @staticmethod
    def forward(ctx, start, end, weight):
        _check_lerp_dtype(start, end, "end")
        if weight._data.ndim:  # (a 0-d weight may be of another float dtype)
            _check_lerp_dtype(start, weight, "weight")
        x, y, w = start._data, end._data, weight._data
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise broadcast_error(x, y) from None
        try:
            shape = np.broadcast_shapes(shape, w.shape)
        except ValueError:
            raise broadcast_error(np.empty(shape), w) from None
        # PyTorch's kernel: from the nearer end, so a weight of 1 gives ``end`` exactly
        diff = y - x
        out = np.where(np.abs(w) < 0.5, x + w * diff, y - diff * (1 - w)).reshape(shape).astype(x.dtype, copy=False)
        needs = ctx.needs_input_grad
        ctx.save_for_backward(start if needs[2] else None, end if needs[2] else None,
                              weight if needs[0] or needs[1] else None)
        ctx.meta = tuple(input_meta(t, out.shape, out.dtype) for t in (start, end, weight))
        return out

    @staticmethod
    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        ms, me, mw = ctx.meta
        needs = ctx.needs_input_grad
        return (grad_for(grad * (1 - weight), ms) if needs[0] else None,
                grad_for(grad * weight, me) if needs[1] else None,
                grad_for(grad * (end - start), mw) if needs[2] else None)

    @staticmethod
    def jvp(ctx, d_start, d_end, d_weight):
        start, end, weight = ctx.primals
        total = sum_tangents(None if d_start is None else d_start * (1 - weight),
                             None if d_end is None else d_end * weight,
                             None if d_weight is None else d_weight * (end - start))
        return total.expand(ctx.result.shape)  # (one term may have only its input's shape)


def _check_lerp_dtype(start, other, name):
    """PyTorch's lerp takes ``end`` (and a weight that is not 0-d) of ``start``'s dtype only."""
    if isinstance(other, _utils._Tensor) and other._data.dtype != start._data.dtype:
        expected, got = (_dtype.cpp_type_name(_dtype.from_numpy_dtype(t._data.dtype)) for t in (start, other))
        raise RuntimeError(f"expected dtype {expected} for `{name}` but got dtype {got}")


def _check_broadcast(a, t1, t2):
    """PyTorch's RuntimeError when ``a``, ``t1``, ``t2`` do not broadcast (NumPy would raise ValueError)."""
    try:
        product_shape = np.broadcast_shapes(t1._data.shape, t2._data.shape)
    except ValueError:
        raise broadcast_error(t1._data, t2._data) from None
    try:
        np.broadcast_shapes(a._data.shape, product_shape)
    except ValueError:
        raise broadcast_error(a._data, np.empty(product_shape)) from None


def _addc_forward(ctx, a, t1, t2, value, combined):
    """``a + value * combined`` (``combined`` is t1 * t2 or t1 / t2); the caller saves what backward needs."""
    ctx.meta = tuple((t._data.shape, t._data.dtype) for t in (a, t1, t2))
    ctx.value = value
    return (a._data + value * combined).astype(a._data.dtype, copy=False)


class Addcmul(Function):
    """``a + value * t1 * t2`` (optimizers' ``addcmul_``)."""

    _backward_name = "AddcmulBackward0"
    _autocast_op = "addcmul"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, t1, t2, value=1):
        _check_broadcast(a, t1, t2)
        # each factor is needed only for the other's gradient (PyTorch saves the same), so a
        # later in-place change of a factor that needs no gradient does not break backward
        n = ctx.needs_input_grad
        ctx.save_for_backward(t1 if n[2] else None, t2 if n[1] else None)
        return _addc_forward(ctx, a, t1, t2, value, t1._data * t2._data)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        ma, m1, m2 = ctx.meta
        n = ctx.needs_input_grad
        return (grad_for(grad, ma) if n[0] else None,
                grad_for(grad * t2 * ctx.value, m1) if n[1] else None,
                grad_for(grad * t1 * ctx.value, m2) if n[2] else None, None)

    @staticmethod
    def jvp(ctx, da, dt1, dt2, *_):
        a, t1, t2 = ctx.primals[:3]
        product = sum_tangents(dt1 * t2 if dt1 is not None else None, t1 * dt2 if dt2 is not None else None)
        return sum_tangents(da, product * ctx.value if product is not None else None)


class Addcdiv(Function):
    """``a + value * t1 / t2`` (Adam's update written as ``addcdiv_``)."""

    _backward_name = "AddcdivBackward0"
    _autocast_op = "addcdiv"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, t1, t2, value=1):
        _check_broadcast(a, t1, t2)
        # t1 is needed only for t2's gradient; PyTorch keeps t2 in every case
        ctx.save_for_backward(t1 if ctx.needs_input_grad[2] else None, t2)
        return _addc_forward(ctx, a, t1, t2, value, t1._data / t2._data)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        ma, m1, m2 = ctx.meta
        n = ctx.needs_input_grad
        return (grad_for(grad, ma) if n[0] else None,
                grad_for(grad * ctx.value / t2, m1) if n[1] else None,
                grad_for(-grad * ctx.value * t1 / (t2 * t2), m2) if n[2] else None, None)

    @staticmethod
    def jvp(ctx, da, dt1, dt2, *_):
        a, t1, t2 = ctx.primals[:3]
        quotient = sum_tangents(dt1 / t2 if dt1 is not None else None,
                                -dt2 * t1 / (t2 * t2) if dt2 is not None else None)
        return sum_tangents(da, quotient * ctx.value if quotient is not None else None)
