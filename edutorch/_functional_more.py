"""More ``torch.<op>`` functions: the function forms of Tensor methods, and ``torch.<op>``
spellings of ``nn.functional`` ops.

Each calls the Tensor method of the same name (``torch.frac(x)`` is ``x.frac()``,
``torch.relu_(x)`` is ``x.relu_()``), so every op keeps one definition.  The
``nn.functional`` ops that PyTorch also exposes as ``torch.<op>`` take PyTorch's
positional order for that spelling, which differs for a few (``torch.dropout(input,
p, train)``, ``torch.batch_norm(input, weight, bias, running_mean, ...)``).
"""
from .nn import functional as _F

# torch.<name>(input, *args, **kwargs) is input.<name>(*args, **kwargs)
_METHODS = (
    # in place
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ "
    "clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fill_ floor_ "
    "log10_ log1p_ log2_ log_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ "
    "sinh_ sqrt_ square_ tan_ tanh_ trunc_ zero_ fix_ frac_ gcd_ lcm_ ldexp_ logit_ sinc_ xlogy_ addmv_ "
    # out of place
    "detach get_device is_inference is_nonzero is_same_size is_signed absolute positive sgn fix frac ravel "
    "diagflat ger vdot inner msort rot90 logit sinc copysign fmax fmin float_power ldexp logcumsumexp aminmax "
    "addmv addr addbmm matrix_power slogdet logdet cross svd signbit isposinf isneginf isreal heaviside "
    "nextafter gcd lcm bitwise_left_shift bitwise_right_shift"
).split()


def _method_call(name):
    def call(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``."
    return call


for _name in _METHODS:
    globals()[_name] = _method_call(_name)

# nn.functional ops whose torch.<op> spelling takes the same arguments
_SAME_AS_F = ("conv1d conv2d conv_transpose2d bilinear cosine_similarity pairwise_distance pixel_shuffle "
              "pixel_unshuffle prelu hardshrink celu celu_ selu selu_ rrelu rrelu_ threshold threshold_ max_pool1d "
              "max_pool2d layer_norm group_norm").split()
for _name in _SAME_AS_F:
    globals()[_name] = getattr(_F, _name)


def dropout(input, p, train):
    """``torch.dropout(input, p, train)``: ``F.dropout`` with ``train`` required."""
    return _F.dropout(input, p, train)


def dropout_(input, p, train):
    return _F.dropout(input, p, train, inplace=True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm``: ``F.batch_norm`` with the affine parameters first (ATen's order)."""
    return _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices)``: ``F.embedding`` with the table first (ATen's order)."""
    return _F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                        scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


__all__ = _METHODS + _SAME_AS_F + ["dropout", "dropout_", "batch_norm", "embedding"]
