"""The ``torch.<op>`` functions (``torch.add(x, y)``, ``torch.exp(x)``...).

Each calls the Tensor method of the same name, so there is one definition
of every op.
"""
from ._tensor import Tensor


def add(input, other, *, alpha=1):
    return input.add(other, alpha=alpha) if isinstance(input, Tensor) else other.add(input, alpha=alpha)


def sub(input, other, *, alpha=1):
    return input.sub(other, alpha=alpha)


def mul(input, other):
    return input.mul(other) if isinstance(input, Tensor) else other.mul(input)


def div(input, other):
    return input.div(other)


def neg(input):
    return input.neg()


def pow(input, exponent):
    return input.pow(exponent)


def exp(input):
    return input.exp()


def log(input):
    return input.log()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def relu(input):
    return input.relu()


def mm(input, mat2):
    return input.mm(mat2)


def matmul(input, other):
    return input.matmul(other)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    return input.sum(dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return input.mean(dim, keepdim, dtype=dtype)


def reshape(input, shape):
    return input.reshape(shape)


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


def permute(input, dims):
    return input.permute(dims)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def unsqueeze(input, dim):
    return input.unsqueeze(dim)


def squeeze(input, dim=None):
    return input.squeeze(dim)


def t(input):
    return input.t()


def clone(input):
    return input.clone()
