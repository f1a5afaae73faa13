"""The op table shared by the engine op tests, and a numerical-gradient helper.

Every differentiable op appears in ``OP_CASES`` once per interesting shape
combination (broadcasting included).  ``fn(lib, *inputs)`` is written against
a library argument, so the same case runs on ``edutorch`` (gradient check)
and on real ``torch`` (parity): tests take an ``op_case`` argument and
``conftest.py`` fans them out over the table.  (A plain module, not the
conftest itself: test folders each have a conftest, so ``from conftest
import`` would find whichever was imported first.)
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    name: str
    fn: object  # fn(lib, *tensors) -> tensor or tuple of tensors
    shapes: tuple  # one shape per differentiable input
    domain: str = "any"  # any | pos | nonzero | unit
    grad: bool = True  # False: forward-only parity (the op has no gradient)
    extra: dict = field(default_factory=dict)

    @property
    def id(self):
        return f"{self.name}-" + "_".join("x".join(map(str, s)) or "scalar" for s in self.shapes)


def sample(shape, domain, rng):
    """float64 values suited to the op: positive for log, away from 0 for abs..."""
    if domain == "pos":
        return np.asarray(rng.uniform(0.5, 2.0, shape))
    if domain == "nonzero":
        return np.asarray(rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 1.5, shape))
    if domain == "unit":
        return np.asarray(rng.uniform(-0.9, 0.9, shape))
    # distinct values (no ties for max/amax/sort-like ops)
    n = int(np.prod(shape))
    values = rng.permutation(n) / max(n, 1) * 2 - 1 + rng.uniform(0, 0.2 / max(n, 1), n)
    return values.reshape(shape)


def total(outputs, weights):
    """Reduce op outputs to one number: Σ out·w over every float output."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    acc = None
    for out, w in zip(outputs, weights):
        if out is None or not out.dtype.is_floating_point:
            continue
        term = (out * w).sum()
        acc = term if acc is None else acc + term
    return acc


def numerical_grads(f, arrays, eps=1e-6):
    """Central differences of the scalar function ``f(arrays)`` w.r.t. every array."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            up = f(arrays)
            flat[i] = old - eps
            down = f(arrays)
            flat[i] = old
            gflat[i] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


def _idx(lib, rows):
    return lib.tensor(rows)


def _setitem(lib, x, v, idx):
    y = x.clone()
    y[idx] = v
    return y


def _mask(lib, x):
    return x.detach() > 0


_BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((3, 1), (1, 4))]
_UNARY_SHAPES = [((),), ((5,),), ((2, 3),), ((2, 3, 2),)]


def _binary(name, fn, domain="any"):
    return [Case(name, fn, s, domain) for s in _BINARY_SHAPES]


def _unary(name, fn, domain="any", shapes=_UNARY_SHAPES):
    return [Case(name, fn, s, domain) for s in shapes]


OP_CASES = [
    # -- arithmetic (with broadcasting and Python numbers on either side)
    *_binary("add", lambda L, a, b: a + b),
    *_binary("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5)),
    *_binary("sub", lambda L, a, b: a - b),
    *_binary("mul", lambda L, a, b: a * b),
    *_binary("div", lambda L, a, b: a / b, "nonzero"),
    *_binary("pow_tensor", lambda L, a, b: a ** b, "pos"),
    *_binary("maximum", lambda L, a, b: L.maximum(a, b)),
    *_binary("minimum", lambda L, a, b: L.minimum(a, b)),
    *_binary("max_binary", lambda L, a, b: L.max(a, b)),
    *_binary("where", lambda L, a, b: L.where(a > b, a, b * 2)),
    *_binary("remainder", lambda L, a, b: a % b, "pos"),
    *_unary("mod_scalar", lambda L, a: a % 0.75, "pos"),
    *_unary("round_floor_ceil", lambda L, a: a.round() + a.floor() * a + a.ceil() - L.trunc(a) * a),
    *_unary("radd", lambda L, a: 2.5 + a),
    *_unary("rsub", lambda L, a: 2.5 - a),
    *_unary("rmul", lambda L, a: 3 * a),
    *_unary("rdiv", lambda L, a: 2 / a, "nonzero"),
    *_unary("neg", lambda L, a: -a),
    *_unary("pow2", lambda L, a: a ** 2),
    *_unary("pow3", lambda L, a: a ** 3),
    *_unary("pow_half", lambda L, a: a ** 0.5, "pos"),
    *_unary("pow_neg", lambda L, a: a ** -1.5, "pos"),
    *_unary("rpow", lambda L, a: 2 ** a),
    *_unary("reciprocal", lambda L, a: a.reciprocal(), "nonzero"),
    # -- element-wise math
    *_unary("exp", lambda L, a: a.exp()),
    *_unary("log", lambda L, a: a.log(), "pos"),
    *_unary("log1p", lambda L, a: a.log1p(), "pos"),
    *_unary("sqrt", lambda L, a: a.sqrt(), "pos"),
    *_unary("rsqrt", lambda L, a: a.rsqrt(), "pos"),
    *_unary("abs", lambda L, a: a.abs(), "nonzero"),
    *_unary("sign", lambda L, a: a.sign() * a, "nonzero"),
    *_unary("sin", lambda L, a: a.sin()),
    *_unary("cos", lambda L, a: a.cos()),
    *_unary("tanh", lambda L, a: a.tanh()),
    *_unary("sigmoid", lambda L, a: a.sigmoid()),
    *_unary("relu", lambda L, a: a.relu(), "nonzero"),
    *_unary("clamp", lambda L, a: a.clamp(-0.45, 0.55)),
    *_unary("clamp_min", lambda L, a: a.clamp(min=0.05)),
    *_unary("clamp_max", lambda L, a: L.clamp(a, max=0.05)),
    *_unary("clamp_min_fn", lambda L, a: a.clamp_min(0.05)),
    Case("clamp_tensor", lambda L, a, lo, hi: a.clamp(lo - 1, hi + 1), ((3, 4), (4,), (3, 1))),
    Case("clamp_tensor_min", lambda L, a, lo: L.clamp(a, min=lo), ((3, 4), (3, 4))),
    Case("where_scalar", lambda L, a: L.where(a > 0, a, 0.5), ((3, 4),)),
    Case("masked_fill", lambda L, a: a.masked_fill(_mask(L, a), -1.0), ((3, 4),)),
    Case("masked_fill_bcast", lambda L, a, m: a.masked_fill(m.detach() > 0, 2.0), ((3, 4), (4,))),
    Case("masked_fill_tensor", lambda L, a, v: a.masked_fill(_mask(L, a), v), ((3, 4), ())),
    # -- matrix products
    Case("mm", lambda L, a, b: a.mm(b), ((2, 3), (3, 4))),
    Case("matmul_2d", lambda L, a, b: a @ b, ((2, 3), (3, 4))),
    Case("matmul_dot", lambda L, a, b: a @ b, ((3,), (3,))),
    Case("matmul_mv", lambda L, a, b: a @ b, ((2, 3), (3,))),
    Case("matmul_vm", lambda L, a, b: a @ b, ((3,), (3, 2))),
    Case("matmul_3d2d", lambda L, a, b: a @ b, ((2, 2, 3), (3, 4))),
    Case("matmul_2d3d", lambda L, a, b: a @ b, ((2, 3), (2, 3, 2))),
    Case("matmul_bcast", lambda L, a, b: a @ b, ((2, 1, 2, 3), (3, 3, 2))),
    Case("matmul_1d3d", lambda L, a, b: a @ b, ((3,), (2, 3, 2))),
    Case("matmul_3d1d", lambda L, a, b: a @ b, ((2, 2, 3), (3,))),
    Case("bmm", lambda L, a, b: L.bmm(a, b), ((2, 2, 3), (2, 3, 4))),
    Case("dot", lambda L, a, b: L.dot(a, b), ((4,), (4,))),
    Case("mv", lambda L, a, b: L.mv(a, b), ((2, 4), (4,))),
    # -- reductions
    *_unary("sum", lambda L, a: a.sum()),
    Case("sum_dim", lambda L, a: a.sum(1), ((2, 3, 2),)),
    Case("sum_dims_keep", lambda L, a: a.sum((0, 2), keepdim=True), ((2, 3, 2),)),
    Case("sum_neg_dim", lambda L, a: a.sum(-1), ((2, 3),)),
    *_unary("mean", lambda L, a: a.mean()),
    Case("mean_dim", lambda L, a: a.mean((0, -1)), ((2, 3, 2),)),
    Case("mean_keep", lambda L, a: a.mean(1, keepdim=True), ((2, 3),)),
    *_unary("prod", lambda L, a: a.prod(), "nonzero"),
    Case("prod_dim", lambda L, a: a.prod(1), ((2, 3, 2),)),
    Case("prod_keep", lambda L, a: a.prod(0, keepdim=True), ((3, 2),)),
    Case("prod_zero", lambda L, a: (a * L.tensor([1.0, 0.0, 1.0], dtype=a.dtype)).prod(-1), ((2, 3),)),
    *_unary("var", lambda L, a: a.var(), shapes=[((5,),), ((2, 3),)]),
    Case("var_dim", lambda L, a: a.var(1), ((2, 3, 2),)),
    Case("var_biased", lambda L, a: a.var(0, unbiased=False, keepdim=True), ((3, 2),)),
    Case("var_correction", lambda L, a: a.var((0, 1), correction=0), ((3, 2),)),
    *_unary("std", lambda L, a: a.std(), shapes=[((5,),), ((2, 3),)]),
    Case("std_dim", lambda L, a: a.std(1, keepdim=True), ((2, 3, 2),)),
    Case("std_correction", lambda L, a: a.std(0, correction=0), ((4, 2),)),
    *_unary("norm", lambda L, a: a.norm(), "nonzero"),
    Case("norm_dim", lambda L, a: a.norm(dim=1), ((2, 3),), "nonzero"),
    Case("norm_p1", lambda L, a: a.norm(p=1, dim=0), ((2, 3),), "nonzero"),
    Case("norm_p3", lambda L, a: a.norm(p=3), ((2, 3),), "nonzero"),
    Case("norm_inf", lambda L, a: a.norm(p=float("inf"), dim=1, keepdim=True), ((2, 3),)),
    *_unary("logsumexp", lambda L, a: a.logsumexp(0), shapes=[((5,),), ((2, 3),), ((2, 3, 2),)]),
    Case("logsumexp_dims", lambda L, a: L.logsumexp(a, (1, 2), keepdim=True), ((2, 3, 2),)),
    *_unary("amax", lambda L, a: a.amax(), shapes=[((5,),), ((2, 3),)]),
    Case("amax_dim", lambda L, a: a.amax(1), ((2, 3, 2),)),
    Case("amin_dims", lambda L, a: a.amin((0, 2), keepdim=True), ((2, 3, 2),)),
    *_unary("max_all", lambda L, a: a.max(), shapes=[((), ), ((5,),), ((2, 3),)]),
    *_unary("min_all", lambda L, a: a.min(), shapes=[((5,),), ((2, 3),)]),
    Case("max_dim", lambda L, a: a.max(1), ((2, 3, 2),)),
    Case("max_dim_keep", lambda L, a: a.max(-1, keepdim=True), ((2, 3),)),
    Case("min_dim", lambda L, a: L.min(a, 0), ((3, 2),)),
    Case("max_values", lambda L, a: a.max(dim=1).values, ((3, 4),)),
    # -- softmax
    Case("softmax", lambda L, a: a.softmax(1), ((2, 3, 2),)),
    Case("softmax_last", lambda L, a: L.softmax(a, -1), ((3, 4),)),
    Case("softmax_1d", lambda L, a: a.softmax(0), ((5,),)),
    Case("log_softmax", lambda L, a: a.log_softmax(1), ((2, 3, 2),)),
    Case("log_softmax_last", lambda L, a: L.log_softmax(a, -1), ((3, 4),)),
    # -- shape ops
    Case("reshape", lambda L, a: a.reshape(3, 4), ((2, 6),)),
    Case("reshape_infer", lambda L, a: a.reshape(-1, 2), ((2, 3, 2),)),
    Case("reshape_copy", lambda L, a: a.t().reshape(6), ((2, 3),)),
    Case("view", lambda L, a: a.view(6, 2), ((2, 3, 2),)),
    Case("view_as", lambda L, a, b: a.view_as(b) * b, ((2, 3), (3, 2))),
    Case("reshape_as", lambda L, a, b: a.reshape_as(b) * b, ((2, 3), (6,))),
    Case("flatten", lambda L, a: a.flatten(), ((2, 3, 2),)),
    Case("flatten_mid", lambda L, a: a.flatten(1), ((2, 3, 2),)),
    Case("unflatten", lambda L, a: a.unflatten(1, (2, 3)), ((2, 6),)),
    Case("permute", lambda L, a: a.permute(2, 0, 1), ((2, 3, 2),)),
    Case("transpose", lambda L, a: a.transpose(0, -1), ((2, 3, 2),)),
    Case("t", lambda L, a: a.t(), ((2, 3),)),
    Case("T", lambda L, a: a.T, ((2, 3),)),
    Case("mT", lambda L, a: a.mT, ((2, 3, 2),)),
    Case("squeeze", lambda L, a: a.squeeze(), ((2, 1, 3, 1),)),
    Case("squeeze_dim", lambda L, a: a.squeeze(1), ((2, 1, 3),)),
    Case("squeeze_dims", lambda L, a: a.squeeze((0, 2)), ((1, 3, 1),)),
    Case("unsqueeze", lambda L, a: a.unsqueeze(1), ((2, 3),)),
    Case("unsqueeze_neg", lambda L, a: a.unsqueeze(-1), ((2, 3),)),
    Case("expand", lambda L, a: a.expand(2, 3, 4), ((3, 1),)),
    Case("expand_keep", lambda L, a: a.expand(-1, 3), ((2, 1),)),
    Case("expand_as", lambda L, a, b: a.expand_as(b) * b, ((1, 3), (2, 3))),
    Case("repeat", lambda L, a: a.repeat(2, 3), ((2, 3),)),
    Case("repeat_new_dims", lambda L, a: a.repeat(2, 1, 2), ((3,),)),
    Case("cat", lambda L, a, b: L.cat([a, b]), ((2, 3), (1, 3))),
    Case("cat_dim1", lambda L, a, b, c: L.cat((a, b, c), dim=1), ((2, 1), (2, 3), (2, 2))),
    Case("stack", lambda L, a, b: L.stack([a, b]), ((2, 3), (2, 3))),
    Case("stack_last", lambda L, a, b: L.stack([a, b], -1), ((2, 3), (2, 3))),
    Case("split", lambda L, a: a.split(2), ((5, 2),)),
    Case("split_sizes", lambda L, a: a.split([1, 3], dim=1), ((2, 4),)),
    Case("split_first_only", lambda L, a: a.split(2)[0], ((5, 2),)),
    Case("chunk", lambda L, a: a.chunk(3, 1), ((2, 7),)),
    Case("unbind", lambda L, a: a.unbind(1), ((2, 3),)),
    Case("unbind_one", lambda L, a: a.unbind()[1], ((3, 2),)),
    Case("narrow", lambda L, a: a.narrow(1, 1, 2), ((2, 4),)),
    # -- indexing
    Case("select", lambda L, a: a[1], ((3, 4),)),
    Case("select_neg", lambda L, a: a[:, -1], ((3, 4),)),
    Case("slice", lambda L, a: a[1:], ((3, 4),)),
    Case("slice_step", lambda L, a: a[:, ::2], ((3, 4),)),
    Case("index_none", lambda L, a: a[None], ((3,),)),
    Case("index_ellipsis", lambda L, a: a[..., 1], ((2, 3, 2),)),
    Case("index_scalar", lambda L, a: a[1, 2], ((3, 4),)),
    Case("index_list", lambda L, a: a[[0, 2, 0]], ((3, 4),)),
    Case("index_tensor", lambda L, a: a[_idx(L, [1, 1, 1])], ((3, 4),)),
    Case("index_2d", lambda L, a: a[_idx(L, [0, 2]), _idx(L, [1, 1])], ((3, 4),)),
    Case("index_mixed", lambda L, a: a[1:, [0, 0, 3]], ((3, 4),)),
    Case("index_mask", lambda L, a: a[a.detach() > 0], ((3, 4),)),
    Case("index_mask_rows", lambda L, a: a[L.tensor([True, False, True])], ((3, 4),)),
    Case("setitem_basic", lambda L, a, v: _setitem(L, a, v, 1), ((3, 4), (4,))),
    Case("setitem_slice", lambda L, a, v: _setitem(L, a * 1, v, (slice(None), slice(1, 3))), ((3, 4), (1,))),
    Case("setitem_adv", lambda L, a, v: _setitem(L, a, v, ([0, 2],)), ((3, 4), (2, 4))),
    Case("setitem_mask", lambda L, a: _setitem(L, a, 0.0, a.detach() > 0), ((3, 4),)),
    Case("gather", lambda L, a: a.gather(1, _idx(L, [[0, 0], [1, 0], [3, 2]])), ((3, 4),)),
    Case("gather_dim0", lambda L, a: L.gather(a, 0, _idx(L, [[2, 1, 0, 0]])), ((3, 4),)),
    Case("scatter", lambda L, a, s: a.scatter(1, _idx(L, [[0, 1], [2, 3], [1, 0]]), s), ((3, 4), (3, 2))),
    Case("scatter_value", lambda L, a: a.scatter(0, _idx(L, [[2, 0, 1, 2]]), 1.5), ((3, 4),)),
    Case("scatter_add", lambda L, a, s: a.scatter_add(1, _idx(L, [[0, 0], [2, 3], [1, 1]]), s), ((3, 4), (3, 2))),
    Case("index_select", lambda L, a: a.index_select(1, _idx(L, [3, 0, 3])), ((3, 4),)),
    Case("index_select_0", lambda L, a: L.index_select(a, 0, _idx(L, [1, 1])), ((3, 4),)),
    Case("masked_select", lambda L, a, b: a.masked_select(b.detach() > 0), ((3, 4), (4,))),
    Case("sort", lambda L, a: a.sort(1), ((3, 4),)),
    Case("sort_desc", lambda L, a: a.sort(0, descending=True).values, ((3, 4),)),
    Case("topk", lambda L, a: a.topk(2), ((3, 4),)),
    Case("topk_smallest", lambda L, a: L.topk(a, 2, dim=0, largest=False), ((3, 4),)),
    Case("cumsum", lambda L, a: a.cumsum(1), ((3, 4),)),
    Case("cumsum_1d", lambda L, a: L.cumsum(a, 0), ((5,),)),
    Case("flip", lambda L, a: a.flip(0, 1), ((3, 4),)),
    Case("flip_fn", lambda L, a: L.flip(a, (-1,)), ((2, 3),)),
    Case("lerp", lambda L, a, b: a.lerp(b, 0.3), ((3, 4), (4,))),
    Case("addcmul", lambda L, a, b, c: a.addcmul(b, c, value=0.5), ((3, 4), (3, 4), (3, 4))),
    Case("addcdiv", lambda L, a, b, c: L.addcdiv(a, b, c.exp(), value=2), ((3, 4), (3, 4), (3, 4))),
    Case("outer", lambda L, a, b: L.outer(a, b), ((3,), (4,))),
    Case("clone", lambda L, a: a.clone(), ((2, 3),)),
    Case("double", lambda L, a: a.double() * 1, ((2, 3),)),
    Case("type_as", lambda L, a, b: a.type_as(b), ((2, 3), (1,))),
]

# ops without a gradient: parity of values and dtypes only
COMPARE_CASES = [
    Case("eq", lambda L, a, b: a == b.round() * 0 + a, ((3, 4), (4,)), grad=False),
    Case("lt", lambda L, a, b: a < b, ((3, 4), (4,)), grad=False),
    Case("le", lambda L, a, b: L.le(a, b), ((3, 1), (1, 4)), grad=False),
    Case("gt_scalar", lambda L, a: a > 0, ((3, 4),), grad=False),
    Case("ge_scalar", lambda L, a: 0.1 <= a, ((3, 4),), grad=False),
    Case("ne", lambda L, a, b: a != b, ((3, 4), (3, 4)), grad=False),
    Case("and_or_xor", lambda L, a, b: ((a > 0) & (b > 0), (a > 0) | (b > 0), (a > 0) ^ (b > 0)), ((3, 4), (4,)), grad=False),
    Case("invert", lambda L, a: ~(a > 0), ((3, 4),), grad=False),
    Case("logical", lambda L, a, b: (L.logical_and(a > 0, b > 0), L.logical_or(a > 0, b), L.logical_not(a > 0), L.logical_xor(a, b > 0)), ((3, 4), (3, 4)), grad=False),
    Case("argmax", lambda L, a: (a.argmax(), a.argmax(1), a.argmax(0, keepdim=True), L.argmin(a, -1)), ((3, 4),), grad=False),
    Case("all_any", lambda L, a: ((a > 0).all(), (a > 0).any(1), L.all(a > -2, 0, keepdim=True), (a > 0).any()), ((3, 4),), grad=False),
    Case("isclose", lambda L, a, b: (L.isclose(a, a + b * 1e-9), L.isclose(a, b)), ((3, 4), (3, 4)), grad=False),
    Case("int_sum", lambda L, a: ((a > 0).sum(), (a * 10).long().sum(1), (a * 10).int().prod()), ((3, 4),), grad=False),
    Case("floor_divide", lambda L, a, b: (a // b, (a * 10).long() // 3, (a * 10).long() % 3, L.div(a, b, rounding_mode="trunc"), (a * 10).long().div(4, rounding_mode="trunc")), ((3, 4), (4,)), "nonzero", grad=False),
    Case("argsort", lambda L, a: (a.argsort(), L.argsort(a, 0, descending=True)), ((3, 4),), grad=False),
    Case("nonzero", lambda L, a: ((a > 0).nonzero(), L.where(a > 0)), ((3, 4),), grad=False),
]

