"""More ops for the forward-mode tests: layers (``nn.functional``), ``linalg`` and the
element-wise functions that ``tests/op_cases.py`` leaves out, in its ``Case`` format
(``fn(lib, *inputs)`` runs on edutorch and on real torch)."""
from op_cases import Case


def _F(L):
    return L.nn.functional


def _idx(L, rows):
    return L.tensor(rows)


def _spd(L, a):
    """A well-conditioned matrix from ``a``: invertible, away from singular."""
    return a + 3 * L.eye(a.shape[-1], dtype=a.dtype)


def _unary_fn(name):
    return lambda L, a: getattr(a, name)()


ELEMENTARY = [("tan", "unit"), ("asin", "unit"), ("acos", "unit"), ("atan", "any"), ("sinh", "any"),
              ("cosh", "any"), ("asinh", "any"), ("atanh", "unit"), ("log2", "pos"), ("log10", "pos"),
              ("expm1", "any"), ("exp2", "any"), ("erfc", "any"), ("erf", "any"), ("erfinv", "unit"),
              ("deg2rad", "any"), ("rad2deg", "any"), ("square", "any")]

EXTRA_CASES = [
    *[Case(name, _unary_fn(name), ((2, 3),), domain) for name, domain in ELEMENTARY],
    Case("acosh", lambda L, a: (a + 2).acosh(), ((2, 3),), "pos"),
    Case("hypot", lambda L, a, b: L.hypot(a, b), ((2, 3), (3,)), "nonzero"),
    Case("atan2", lambda L, a, b: L.atan2(a, b), ((2, 3), (2, 3)), "nonzero"),
    Case("logaddexp", lambda L, a, b: L.logaddexp(a, b), ((2, 3), (2, 1))),
    Case("fmod", lambda L, a, b: L.fmod(a, b + 2), ((2, 3), (2, 3)), "pos"),
    Case("xlogy", lambda L, a, b: L.xlogy(a, b), ((2, 3), (2, 3)), "pos"),
    Case("cumprod", lambda L, a: a.cumprod(1), ((2, 4),), "nonzero"),
    Case("cumprod_zero", lambda L, a: (a * L.tensor([1.0, 0.0, 1.0, 1.0], dtype=a.dtype)).cumprod(1), ((2, 4),)),
    Case("median", lambda L, a: a.median(), ((3, 3),)),
    Case("median_dim", lambda L, a: a.median(1), ((3, 3),)),
    Case("nan_to_num", lambda L, a: L.nan_to_num(a), ((2, 3),)),
    Case("roll", lambda L, a: a.roll(1, 1), ((2, 3),)),
    Case("addmm", lambda L, b, x, y: L.addmm(b, x, y, beta=0.5, alpha=2), ((3,), (2, 4), (4, 3))),
    Case("trace", lambda L, a: a.trace(), ((3, 3),)),
    Case("triu_tril", lambda L, a: (a.triu(), L.tril(a, -1)), ((3, 4),)),
    Case("diagonal", lambda L, a: a.diagonal(1), ((3, 4),)),
    Case("diag_both", lambda L, a, v: (L.diag(a), L.diag(v, 1)), ((3, 3), (2,))),
    Case("det", lambda L, a: L.linalg.det(_spd(L, a)), ((3, 3),)),
    Case("inv", lambda L, a: L.linalg.inv(_spd(L, a)), ((2, 3, 3),)),
    Case("solve", lambda L, a, b: L.linalg.solve(_spd(L, a), b), ((3, 3), (3, 2))),
    Case("solve_vector", lambda L, a, b: L.linalg.solve(_spd(L, a), b), ((3, 3), (3,))),
    Case("solve_right", lambda L, a, b: L.linalg.solve(_spd(L, a), b, left=False), ((3, 3), (2, 3))),
    Case("matrix_exp", lambda L, a: L.linalg.matrix_exp(a), ((3, 3),)),
    Case("eigh", lambda L, a: [(V * V, w) for w, V in [L.linalg.eigh(a + a.mT)]][0], ((3, 3),)),
    Case("dist", lambda L, a, b: (L.dist(a, b), L.dist(a, b, 1), L.dist(a, b, 3)), ((2, 3), (3,))),
    # -- layers
    Case("linear", lambda L, x, w, b: _F(L).linear(x, w, b), ((4, 3), (2, 3), (2,))),
    Case("linear_nobias", lambda L, x, w: _F(L).linear(x, w), ((4, 3), (2, 3))),
    Case("bilinear", lambda L, x1, x2, w, b: _F(L).bilinear(x1, x2, w, b), ((4, 2), (4, 3), (5, 2, 3), (5,))),
    Case("conv1d", lambda L, x, w, b: _F(L).conv1d(x, w, b, padding=1), ((2, 2, 5), (3, 2, 3), (3,))),
    Case("conv2d", lambda L, x, w, b: _F(L).conv2d(x, w, b, stride=2, padding=1), ((1, 2, 5, 5), (4, 2, 3, 3), (4,))),
    Case("conv2d_groups", lambda L, x, w: _F(L).conv2d(x, w, groups=2, dilation=2), ((1, 4, 6, 6), (2, 2, 2, 2))),
    Case("max_pool2d", lambda L, x: _F(L).max_pool2d(x, 2), ((1, 2, 4, 4),)),
    Case("max_pool2d_overlap", lambda L, x: _F(L).max_pool2d(x, 3, stride=1, padding=1), ((1, 1, 4, 4),)),
    Case("avg_pool2d", lambda L, x: _F(L).avg_pool2d(x, 2, stride=1, padding=1), ((1, 2, 3, 3),)),
    Case("adaptive_avg_pool2d", lambda L, x: _F(L).adaptive_avg_pool2d(x, (2, 3)), ((1, 2, 5, 4),)),
    Case("batch_norm", lambda L, x, w, b: _F(L).batch_norm(x, None, None, w, b, training=True),
         ((4, 3, 2), (3,), (3,))),
    Case("batch_norm_eval", lambda L, x, w: _F(L).batch_norm(
        x, L.zeros(3, dtype=x.dtype) + 0.1, L.ones(3, dtype=x.dtype) * 2, w, None, training=False), ((4, 3), (3,))),
    Case("layer_norm", lambda L, x, w, b: _F(L).layer_norm(x, (3,), w, b), ((2, 3), (3,), (3,))),
    Case("group_norm", lambda L, x, w, b: _F(L).group_norm(x, 2, w, b), ((2, 4, 3), (4,), (4,))),
    Case("embedding", lambda L, w: _F(L).embedding(_idx(L, [[0, 2], [2, 1]]), w), ((3, 2),)),
    Case("pad", lambda L, x: (_F(L).pad(x, (1, 2), value=0.5), _F(L).pad(x, (1, 1), mode="reflect")), ((1, 2, 3),)),
    Case("unfold_fold", lambda L, x: _F(L).fold(_F(L).unfold(x, 2), (3, 3), 2), ((1, 2, 3, 3),)),
    Case("pixel_shuffle", lambda L, x: _F(L).pixel_shuffle(x, 2), ((1, 4, 2, 2),)),
    Case("activations", lambda L, x: tuple(f(x * 3) for f in (
        _F(L).leaky_relu, _F(L).elu, _F(L).celu, _F(L).selu, _F(L).hardtanh, _F(L).hardsigmoid, _F(L).hardswish,
        _F(L).mish, _F(L).gelu, _F(L).silu, _F(L).softplus, _F(L).relu6, _F(L).logsigmoid, _F(L).softsign,
        lambda t: _F(L).threshold(t, 0.1, 2.0), lambda t: _F(L).gelu(t, approximate="tanh"),
        lambda t: _F(L).softplus(t, beta=2, threshold=1), lambda t: _F(L).rrelu(t, training=False))),
        ((3, 4),), "nonzero"),
    Case("softmin_glu", lambda L, x: (_F(L).softmin(x, 1), _F(L).glu(x, 1)), ((2, 4),)),
    Case("normalize", lambda L, x, y: (_F(L).normalize(x), _F(L).cosine_similarity(x, y)), ((2, 3), (2, 3))),
    Case("prelu", lambda L, x, w: _F(L).prelu(x, w), ((2, 3, 2), (3,)), "nonzero"),
    Case("losses", lambda L, x, t: (_F(L).mse_loss(x, t), _F(L).l1_loss(x, t, reduction="sum"),
                                    _F(L).smooth_l1_loss(x * 3, t, reduction="none"), _F(L).huber_loss(x * 3, t)),
         ((2, 3), (2, 3))),
    Case("nll_cross_entropy", lambda L, x: (
        _F(L).nll_loss(x.log_softmax(1), _idx(L, [0, 2])), _F(L).cross_entropy(x, _idx(L, [1, 2]), reduction="none"),
        _F(L).cross_entropy(x, _idx(L, [1, 0]), weight=L.tensor([1.0, 2.0, 0.5], dtype=x.dtype))), ((2, 3),)),
    Case("bce", lambda L, x, t: (_F(L).binary_cross_entropy(x.sigmoid(), t.sigmoid()),
                                 _F(L).binary_cross_entropy_with_logits(x, t.sigmoid(), reduction="none"),
                                 _F(L).binary_cross_entropy_with_logits(
                                     x, t.sigmoid(), pos_weight=L.tensor([2.0, 1.0, 0.5], dtype=x.dtype))),
         ((2, 3), (2, 3))),
    Case("kl_div", lambda L, x, t: _F(L).kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"), ((2, 3), (2, 3))),
    Case("attention", lambda L, q, k, v: _F(L).scaled_dot_product_attention(q, k, v), ((1, 2, 3), (1, 4, 3), (1, 4, 2))),
]

# the SVD's and QR's factors are unique up to signs: compare sign-free products
LINALG_FACTOR_CASES = [
    Case("svd", lambda L, a: [(S, U * U, Vh * Vh) for U, S, Vh in [L.linalg.svd(a, full_matrices=False)]][0], ((4, 3),)),
    Case("svd_wide", lambda L, a: [(S, U * U, Vh * Vh) for U, S, Vh in [L.linalg.svd(a, full_matrices=False)]][0],
         ((2, 4),)),
    Case("svd_full", lambda L, a: [(S, U * U, Vh * Vh) for U, S, Vh in [L.linalg.svd(a)]][0], ((3, 3),)),
    Case("qr", lambda L, a: [(Q * R.diagonal().sign(), R * R.diagonal().sign().unsqueeze(-1))
                             for Q, R in [L.linalg.qr(a)]][0], ((4, 3),)),
    Case("qr_wide", lambda L, a: [(Q * R.diagonal().sign(), R * R.diagonal().sign().unsqueeze(-1))
                                  for Q, R in [L.linalg.qr(a)]][0], ((2, 4),)),
]
EXTRA_CASES += LINALG_FACTOR_CASES
