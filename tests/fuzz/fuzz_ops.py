"""The op table of the differential fuzzer: what a program step can be.

Each ``Op`` is a line of Python with holes: ``{0}``, ``{1}`` are the input
tensors, ``{dim}`` etc. come from its ``args(r, shape)`` generator (which
returns None when the op does not apply to that shape).  ``partner(r, shape,
args)`` gives the shape of each further operand (an existing tensor of that
shape is used, or a new leaf made).  ``guard(values, **args)`` runs on the
PyTorch values before the step and refuses hardware-dependent corners (ties,
kinks, domain edges): such programs are not compared.

Kinds: ``fn`` (a new tensor), ``view`` (a view of {0}), ``multi`` (a tuple of
views: split/chunk/unbind), ``inplace`` (a statement writing into {0}),
``layer`` (an ``nn`` module built, given seeded parameters and called),
``stmt`` (a statement that writes nothing: retain_grad).

To add an op: append one ``Op(...)`` to its family below; run ``./dev fuzz``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np


class Code(str):
    """An argument written into the program as source (``torch.tensor([0, 2])``), not repr'd."""


def fmt(value):
    return str(value) if isinstance(value, Code) else repr(value)


@dataclass(frozen=True)
class Op:
    name: str
    template: str
    kind: str = "fn"  # fn | view | multi | inplace | layer | stmt
    arity: int = 1
    args: object = None  # args(r, shape) -> dict or None
    partner: object = None  # partner(r, shape, args) -> shape of the next operand
    guard: object = None  # guard(values, **args) -> bool (on the PyTorch values)
    input_shape: object = None  # input_shape(r) -> a shape the op takes (a new leaf is made sometimes)
    no_grad: bool = False  # the line runs under ``with torch.no_grad():``

    def build(self, gen, names, args):
        """The ``Step`` for inputs ``names`` (``gen`` runs PyTorch for output counts and modules)."""
        from fuzz_program import Step

        text = self.template.format(*names, **{k: fmt(v) for k, v in args.items() if not k.startswith("_")})
        common = dict(inputs=tuple(names), shapes=tuple(gen.shape(n) for n in names),
                      grads=tuple(bool(gen.ns[n].requires_grad) for n in names),
                      args=tuple(sorted(args.items())))
        if self.kind in ("inplace", "stmt"):
            target = names[0] if self.kind == "inplace" else None
            return Step(self.name, text, target=target, **common)
        if self.kind == "layer":
            return _layer_step(self, gen, names, text, common, args)
        if self.kind == "multi":
            try:
                count = len(eval(text, gen.ns))
            except Exception:  # noqa: BLE001 - PyTorch refuses: one name, the step raises
                count = 1
            outs = tuple(gen.fresh("v") for _ in range(count))
            lhs = ", ".join(outs) + ("," if count == 1 else "")
            return Step(self.name, self.line(f"{lhs} = {text}"), outputs=outs, **common)
        out = gen.fresh("v")
        return Step(self.name, self.line(f"{out} = {text}"), outputs=(out,), **common)

    def line(self, assignment):
        return f"with torch.no_grad(): {assignment}" if self.no_grad else assignment


def _layer_step(op, gen, names, ctor, common, args):
    """``m = torch.nn.X(...)``; its parameters set to distinct seeded values; ``v = m(x)``."""
    from fuzz_program import Step

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Initializing zero-element tensors is a no-op"
            module = eval(ctor, gen.ns)
    except Exception:  # noqa: BLE001
        return None
    m, out = gen.fresh("m"), gen.fresh("v")
    lines = [f"{m} = {ctor}"]
    n = sum(p.numel() for p in module.parameters())
    if n:
        ints = gen.r.sample([k for k in range(-120, 121) if k % 25], min(n, 200))
        values = [ints[i % len(ints)] / 100 for i in range(n)]
        lines.append(f"torch.nn.utils.vector_to_parameters(torch.tensor({values!r}, dtype=torch.float64), "
                     f"{m}.parameters())")
    lines.append(f"{out} = {m}({names[0]})")
    leaves = tuple(f"{m}.{p}" for p, t in module.named_parameters() if t.requires_grad)
    target = names[0] if args.get("inplace") else None
    return Step(op.name, "\n".join(lines), outputs=(m, out), target=target, leaves=leaves, **common)


# --- argument generators -----------------------------------------------------------
def a_dim(r, shape):
    """A dim of ``shape`` (negative sometimes); 0 or -1 for a 0-d tensor."""
    n = max(len(shape), 1)
    d = r.randrange(n)
    return d - n if r.random() < 0.3 else d


def dim_args(r, shape):
    return {"dim": a_dim(r, shape)}


def dim_keep_args(r, shape):
    return {"dim": a_dim(r, shape), "keepdim": r.random() < 0.4}


def dims_keep_args(r, shape):
    """Reductions over one dim, several dims, or all dims (dim=None left out)."""
    c = r.random()
    if c < 0.2 or not shape:
        return {"dim": Code("None") if c < 0.1 else a_dim(r, shape), "keepdim": r.random() < 0.4}
    dims = r.sample(range(len(shape)), r.randint(1, len(shape)))
    return {"dim": tuple(dims) if len(dims) > 1 or r.random() < 0.3 else dims[0], "keepdim": r.random() < 0.4}


def need(ndim_ok, make=None):
    """Args that apply only when ``ndim_ok(ndim)``; ``make(r, shape)`` gives them (default: none)."""
    def args(r, shape):
        if not ndim_ok(len(shape)):
            return None
        return make(r, shape) if make else {}
    return args


def two_dims(r, shape):
    if len(shape) < 2:
        return None
    d0, d1 = r.sample(range(len(shape)), 2)
    return {"d0": d0, "d1": d1 - len(shape) if r.random() < 0.3 else d1}


def same_numel_shape(r, shape):
    """Another shape with as many elements (one entry -1 sometimes)."""
    n = int(np.prod(shape))
    if n == 0:
        return {"shape": (0, -1) if r.random() < 0.5 else (r.choice([1, 2]), 0)}
    factors, rest = [], n
    for p in (2, 3, 2, 5, 7, 2, 3):
        while rest % p == 0 and r.random() < 0.5:
            factors.append(p)
            rest //= p
    factors.append(rest)
    r.shuffle(factors)
    out = [f for f in factors if f != 1 or r.random() < 0.3]
    if out and r.random() < 0.3:
        out[r.randrange(len(out))] = -1
    return {"shape": tuple(out)}


def narrow_args(r, shape):
    if not shape:
        return None
    d = r.randrange(len(shape))
    start = r.randint(0, shape[d])
    return {"dim": d, "start": start, "length": r.randint(0, shape[d] - start)}


def select_args(r, shape):
    if not shape or 0 in shape:
        return None
    d = r.randrange(len(shape))
    return {"dim": d, "index": r.randrange(-shape[d], shape[d])}


def basic_index(r, shape):
    """A basic index (ints, slices with steps, None, ...) as source, and the shape it selects."""
    parts, probe = [], []
    for n in shape[: r.randint(1, max(len(shape), 1))]:
        c = r.random()
        if c < 0.3 and n:
            i = r.randrange(-n, n)
            parts.append(str(i))
            probe.append(i)
        elif c < 0.85:
            a, b, s = r.choice([None, 0, 1, -1]), r.choice([None, n, 2, -1]), r.choice([None, 1, 2])
            text = ("" if a is None else str(a)) + ":" + ("" if b is None else str(b))
            parts.append(text + ("" if s is None else f":{s}"))
            probe.append(slice(a, b, s))
        else:
            parts.append(":")
            probe.append(slice(None))
    if r.random() < 0.1:
        parts.append("None")
        probe.append(None)
    if not parts:
        parts, probe = ["..."], [Ellipsis]
    region = np.empty(shape)[tuple(probe)].shape
    return {"idx": Code(", ".join(parts)), "_region": region}


def index_tensor(r, n, size, unique=False):
    """``torch.tensor([...])`` of ``size`` positions into a dim of length ``n``."""
    if unique:
        values = r.sample(range(n), size)
    else:
        values = [r.randrange(-n, n) if r.random() < 0.2 else r.randrange(n) for _ in range(size)]
    return Code(f"torch.tensor({values!r})")


def gather_args(r, shape):
    """dim and an index tensor of the same ndim, each entry < size of dim (unique along dim)."""
    if not shape or 0 in shape:
        return None
    d = r.randrange(len(shape))
    k = r.randint(1, shape[d])
    ishape = [r.randint(1, s) for s in shape]
    ishape[d] = k
    rows = np.empty(ishape, dtype=np.int64)
    for pos in np.ndindex(*[s for i, s in enumerate(ishape) if i != d]):
        picks = r.sample(range(shape[d]), k)
        for j, p in enumerate(picks):
            full = list(pos)
            full.insert(d, j)
            rows[tuple(full)] = p
    return {"dim": d, "index": Code(f"torch.tensor({rows.tolist()!r})"), "_ishape": tuple(ishape)}


def mask_literal(r, shape):
    m = (np.array([r.random() < 0.5 for _ in range(int(np.prod(shape)))]).reshape(shape))
    return Code(f"torch.tensor({m.tolist()!r})")


def expand_args(r, shape):
    new = [s if s != 1 or r.random() < 0.5 else r.choice([1, 2, 3]) for s in shape]
    new = [-1 if r.random() < 0.2 else s for s in new]
    if r.random() < 0.3:
        new.insert(0, r.choice([1, 2]))
    return {"size": tuple(new)}


def permute_args(r, shape):
    p = list(range(len(shape)))
    r.shuffle(p)
    return {"dims": tuple(p)}


def split_args(r, shape):
    if not shape:
        return None
    d = r.randrange(len(shape))
    n = shape[d]
    if r.random() < 0.5 or n == 0:
        return {"size": r.randint(1, max(n, 1)), "dim": d}
    sizes, left = [], n
    while left:
        k = r.randint(1, left)
        sizes.append(k)
        left -= k
    return {"size": sizes, "dim": d}


def unbind_args(r, shape):
    if not shape or shape[0] > 4:
        return None
    return {"dim": a_dim(r, shape)}


def diagonal_args(r, shape):
    if len(shape) < 2:
        return None
    d1, d2 = r.sample(range(len(shape)), 2)
    return {"offset": r.randint(-1, 1), "dim1": d1, "dim2": d2}


def scalar(*choices):
    def args(r, shape):
        return {"s": r.choice(choices)}
    return args


def clamp_args(r, shape):
    lo = r.choice([-1.1, -0.3, None])
    hi = r.choice([0.4, 1.3, None]) if lo is not None else r.choice([0.4, 1.3])
    return {"lo": lo, "hi": hi}


# --- partners (shapes of further operands) -------------------------------------------------
def same_shape(r, shape, args):
    return shape


def broadcast_to_partner(r, shape, args):
    """A shape that broadcasts TO ``shape`` (an in-place operand must not grow the target):
    the same, a suffix, some dims 1, or 0-d."""
    c = r.random()
    if c < 0.4:
        return shape
    if c < 0.6:
        return shape[r.randint(0, len(shape)):]
    if c < 0.9:
        return tuple(1 if r.random() < 0.5 else s for s in shape)
    return ()


def broadcast_partner(r, shape, args):
    """A shape that broadcasts with ``shape``: one that broadcasts to it, or one more leading dim."""
    if r.random() < 0.15 and len(shape) < 4:
        return (r.choice([1, 2]),) + shape
    return broadcast_to_partner(r, shape, args)


def region_partner(r, shape, args):
    return broadcast_to_partner(r, args["_region"], args)


def matmul_partner(r, shape, args):
    if not shape:
        return None
    n = shape[-1]
    k = r.choice([1, 2, 3])
    if len(shape) == 1:
        return r.choice([(n,), (n, k), (2, n, k)])
    if len(shape) == 2:
        return r.choice([(n,), (n, k), (r.choice([1, 2]), n, k)])
    batch = tuple(1 if r.random() < 0.3 else b for b in shape[:-2])
    return r.choice([batch + (n, k), (n, k), (n,)])


def mm_partner(r, shape, args):
    return (shape[-1], r.choice([1, 2, 3])) if len(shape) == 2 else None


def bmm_partner(r, shape, args):
    return (shape[0], shape[2], r.choice([1, 2])) if len(shape) == 3 else None


def vec_partner(r, shape, args):
    return (shape[-1],) if len(shape) in (1, 2) else None


def cat_partner(r, shape, args):
    d = args["dim"] % max(len(shape), 1)
    other = list(shape)
    if other:
        other[d] = r.choice([0, 1, 2])
    return tuple(other)


def gather_src_partner(r, shape, args):
    return args["_ishape"]


def any_partner(r, shape, args):
    return (r.choice([1, 2, 3]),)


# --- guards (refuse hardware-dependent corners; evaluated on PyTorch values) ------------
def _np(t):
    return t.detach().numpy()


def away(*points, which=0):
    """Inputs at least 1e-6 from every kink in ``points``."""
    def guard(values, **args):
        a = _np(values[which])
        return all(np.all(np.abs(a - p) > 1e-6) for p in points)
    return guard


def above(lo, which=0):
    def guard(values, **args):
        return bool(np.all(_np(values[which]) > lo))
    return guard


def nonzero(which):
    def guard(values, **args):
        return bool(np.all(np.abs(_np(values[which])) > 0.05))
    return guard


def away_from_integers(offset=0.0):
    def guard(values, **args):
        a = _np(values[0]) - offset
        return bool(np.all(np.abs(a - np.round(a)) > 1e-6))
    return guard


def distinct(a):
    """No two values within 1e-9 of each other (ties decide max/sort/median differently)."""
    flat = np.sort(np.asarray(a, dtype=np.float64).reshape(-1))
    return bool(np.all(np.diff(flat) > 1e-9))


def no_ties(values, **args):
    return distinct(_np(values[0]))


def no_ties_pair(values, **args):
    a, b = np.broadcast_arrays(_np(values[0]), _np(values[1]))
    return bool(np.all(np.abs(a - b) > 1e-9))


def nonzero_norms(values, dim=None, **args):
    """Every vector along ``dim`` has a norm > 1e-6 (a norm is not differentiable at 0: PyTorch's
    double backward gives NaN there) and the dim is not empty."""
    a = _np(values[0])
    if a.ndim == 0 or a.size == 0:
        return a.size > 0
    return bool(np.all(np.sqrt((a * a).sum(axis=dim)) > 1e-6))


def spread(values, dim=None, **args):
    """Different values along ``dim``: a std of one value, or of equal ones (``x[:, [0, 0]]``), is 0,
    where it is not differentiable (a derivative of rounding noise: PyTorch's Welford sum gives 0 exactly)."""
    a = _np(values[0])
    if a.ndim == 0:
        return True
    return a.shape[dim] > 1 and bool(np.all(np.ptp(a, axis=dim) > 1e-9))


def clamp_guard(values, lo=None, hi=None, **args):
    return away(*[p for p in (lo, hi) if p is not None])(values)


def all_of(*guards):
    def guard(values, **args):
        return all(g(values, **args) for g in guards)
    return guard


# --- the table -----------------------------------------------------------------------------
UNARY = [
    Op("neg", "{0}.neg()"), Op("exp", "{0}.exp()", guard=lambda v, **a: bool(np.all(_np(v[0]) < 5))),
    Op("tanh", "torch.tanh({0})"), Op("sigmoid", "{0}.sigmoid()"), Op("sin", "{0}.sin()"),
    Op("cos", "torch.cos({0})"), Op("abs", "{0}.abs()", guard=away(0.0)), Op("relu", "torch.relu({0})",
                                                                                guard=away(0.0)),
    Op("log", "{0}.log()", guard=above(0.05)), Op("sqrt", "{0}.sqrt()", guard=above(0.05)),
    Op("rsqrt", "{0}.rsqrt()", guard=above(0.05)), Op("reciprocal", "{0}.reciprocal()", guard=nonzero(0)),
    Op("square", "{0}.square()"), Op("pow", "{0}.pow({s})", args=scalar(2, 3, -1, 0.5),
                                     guard=above(0.05)),
    Op("pow_int", "{0} ** 2"), Op("expm1", "torch.expm1({0})"), Op("log1p", "{0}.log1p()", guard=above(-0.9)),
    Op("atan", "{0}.atan()"), Op("asinh", "{0}.asinh()"), Op("erf", "torch.erf({0})"),
    Op("sign", "{0}.sign()", guard=away(0.0)), Op("floor", "{0}.floor()", guard=away_from_integers()),
    Op("round", "{0}.round()", guard=away_from_integers(0.5)),
    Op("clamp", "{0}.clamp({lo}, {hi})", args=clamp_args, guard=clamp_guard),
    Op("clamp_min", "torch.clamp_min({0}, 0.2)", guard=away(0.2)),
    Op("scale", "{0} * {s}", args=scalar(2.0, -0.5, 3)), Op("rsub", "{s} - {0}", args=scalar(1.0, 0.5)),
    Op("rdiv", "1.5 / {0}", guard=nonzero(0)), Op("add_scalar", "{0} + {s}", args=scalar(0.3, -1)),
    Op("clone", "{0}.clone()"), Op("softplus", "F.softplus({0})"), Op("gelu", "F.gelu({0})"),
    Op("gelu_tanh", "F.gelu({0}, approximate='tanh')"), Op("silu", "F.silu({0})"), Op("mish", "F.mish({0})"),
    Op("elu", "F.elu({0})", guard=away(0.0)), Op("selu", "F.selu({0})", guard=away(0.0)),
    Op("celu", "F.celu({0}, 0.7)", guard=away(0.0)), Op("leaky_relu", "F.leaky_relu({0}, 0.1)", guard=away(0.0)),
    Op("hardtanh", "F.hardtanh({0})", guard=away(-1.0, 1.0)), Op("relu6", "F.relu6({0})", guard=away(0.0, 6.0)),
    Op("hardswish", "F.hardswish({0})", guard=away(-3.0, 3.0)),
    Op("hardsigmoid", "F.hardsigmoid({0})", guard=away(-3.0, 3.0)),
    Op("softsign", "F.softsign({0})", guard=away(0.0)), Op("tanhshrink", "F.tanhshrink({0})"),
    Op("logsigmoid", "F.logsigmoid({0})"), Op("softshrink", "F.softshrink({0}, 0.3)", guard=away(-0.3, 0.3)),
    Op("hardshrink", "F.hardshrink({0}, 0.3)", guard=away(-0.3, 0.3)),
    Op("threshold", "F.threshold({0}, 0.1, -2.0)", guard=away(0.1)),
    Op("cumsum", "{0}.cumsum({dim})", args=dim_args), Op("cumprod", "torch.cumprod({0}, dim={dim})",
                                                          args=dim_args),
    Op("flip", "{0}.flip({dims})", args=lambda r, s: {"dims": tuple(r.sample(range(max(len(s), 1)), 1))}),
    Op("roll", "{0}.roll({s}, {dim})", args=lambda r, s: {"s": r.choice([1, -1, 2]), "dim": a_dim(r, s)}),
    Op("tril", "{0}.tril({s})", args=need(lambda n: n >= 2, scalar(0, -1, 1))),
    Op("triu", "torch.triu({0})", args=need(lambda n: n >= 2)),
    Op("trace", "{0}.trace()", args=need(lambda n: n == 2)),
    Op("repeat", "{0}.repeat({reps})",
       args=lambda r, s: {"reps": tuple(r.choice([1, 2]) for _ in range(len(s) + r.randint(0, 1)))}),
]

BINARY = [
    Op("add", "{0} + {1}", arity=2, partner=broadcast_partner),
    Op("add_alpha", "torch.add({0}, {1}, alpha=0.5)", arity=2, partner=broadcast_partner),
    Op("sub", "{0} - {1}", arity=2, partner=broadcast_partner),
    Op("mul", "{0} * {1}", arity=2, partner=broadcast_partner),
    Op("div", "{0} / {1}", arity=2, partner=broadcast_partner, guard=nonzero(1)),
    Op("maximum", "torch.maximum({0}, {1})", arity=2, partner=broadcast_partner, guard=no_ties_pair),
    Op("minimum", "{0}.minimum({1})", arity=2, partner=broadcast_partner, guard=no_ties_pair),
    # both nonzero: atan2(±0, negative) is ±pi by the zero's sign, which differs (-0.0 from a shrink)
    Op("atan2", "torch.atan2({0}, {1})", arity=2, partner=broadcast_partner, guard=all_of(nonzero(0), nonzero(1))),
    Op("pow_t", "{0}.abs().add(0.1) ** {1}", arity=2, partner=broadcast_partner, guard=away(0.0)),
    Op("hypot", "torch.hypot({0}, {1})", arity=2, partner=broadcast_partner, guard=nonzero(0)),
    Op("lerp", "torch.lerp({0}, {1}, 0.3)", arity=2, partner=broadcast_partner),
    Op("logaddexp", "torch.logaddexp({0}, {1})", arity=2, partner=broadcast_partner),
    # not log(1) == 0 exactly (|y| = 0.9): a 0 that a later xlogy's x == 0 rule turns into a kink
    Op("xlogy", "torch.xlogy({0}, {1}.abs().add(0.1))", arity=2, partner=broadcast_partner,
       guard=lambda v, **a: bool(np.all(np.abs(np.abs(_np(v[1])) - 0.9) > 1e-6))),
    Op("where", "torch.where({mask}, {0}, {1})", arity=2, partner=same_shape,
       args=lambda r, s: {"mask": mask_literal(r, s)}),
    Op("clamp_t", "{0}.clamp(min={1})", arity=2, partner=broadcast_to_partner, guard=no_ties_pair),
    Op("addcmul", "torch.addcmul({0}, {1}, {2}, value=0.5)", arity=3, partner=broadcast_partner),
    Op("addcdiv", "torch.addcdiv({0}, {1}, {2})", arity=3, partner=broadcast_partner, guard=nonzero(2)),
    Op("mse_loss", "F.mse_loss({0}, {1})", arity=2, partner=same_shape),
    Op("l1_loss", "F.l1_loss({0}, {1}, reduction='sum')", arity=2, partner=same_shape,
       guard=lambda v, **a: no_ties_pair(v)),
    Op("smooth_l1", "F.smooth_l1_loss({0}, {1}, beta=0.5)", arity=2, partner=same_shape,
       guard=lambda v, **a: bool(np.all(np.abs(np.abs(_np(v[0]) - _np(v[1])) - 0.5) > 1e-6))),
    Op("cosine_similarity", "F.cosine_similarity({0}, {1}, dim={dim})", arity=2, partner=same_shape,
       args=need(lambda n: n >= 1, dim_args), guard=nonzero_norms),
]

REDUCTIONS = [
    Op("sum", "{0}.sum({dim}, keepdim={keepdim})", args=dims_keep_args),
    Op("sum_all", "{0}.sum()"), Op("mean", "{0}.mean({dim}, keepdim={keepdim})", args=dims_keep_args),
    Op("prod", "{0}.prod({dim}, keepdim={keepdim})", args=dim_keep_args),
    Op("amax", "{0}.amax({dim}, keepdim={keepdim})", args=dims_keep_args, guard=no_ties),
    Op("amin", "torch.amin({0}, {dim})", args=dim_args, guard=no_ties),
    Op("max_all", "{0}.max()", guard=no_ties), Op("min_all", "torch.min({0})", guard=no_ties),
    Op("max_dim", "{0}.max({dim}, keepdim={keepdim}).values", args=dim_keep_args, guard=no_ties),
    Op("min_dim", "torch.min({0}, {dim}).values", args=dim_args, guard=no_ties),
    Op("var", "{0}.var({dim}, keepdim={keepdim})", args=dims_keep_args),
    Op("std", "{0}.std({dim}, correction=0)", args=dim_args, guard=spread),
    Op("norm", "{0}.norm()", guard=lambda v, **a: bool(np.any(_np(v[0]) != 0))),
    Op("norm_dim", "torch.linalg.vector_norm({0}, {p}, dim={dim})",
       args=lambda r, s: {"p": r.choice([2, 1, 3]), "dim": a_dim(r, s)},
       guard=all_of(away(0.0), nonzero_norms)),
    Op("logsumexp", "{0}.logsumexp({dim})", args=dim_args),
    Op("median", "{0}.median()", guard=no_ties),
    Op("median_dim", "{0}.median({dim}).values", args=dim_args, guard=no_ties),
    Op("kthvalue", "{0}.kthvalue(1, {dim}).values", args=dim_args, guard=no_ties),
    Op("sort", "{0}.sort({dim}, descending={d}).values",
       args=lambda r, s: {"dim": a_dim(r, s), "d": r.random() < 0.5}, guard=no_ties),
    Op("topk", "{0}.topk(1, {dim}).values", args=dim_args, guard=no_ties),
    Op("cummax", "{0}.cummax({dim}).values", args=dim_args, guard=no_ties),
]

MATMUL = [
    Op("matmul", "{0} @ {1}", arity=2, partner=matmul_partner),
    Op("matmul_fn", "torch.matmul({0}, {1})", arity=2, partner=matmul_partner),
    Op("mm", "{0}.mm({1})", arity=2, partner=mm_partner),
    Op("bmm", "torch.bmm({0}, {1})", arity=2, partner=bmm_partner),
    Op("mv", "{0}.mv({1})", arity=2, partner=vec_partner, args=need(lambda n: n == 2)),
    Op("dot", "{0}.dot({1})", arity=2, partner=vec_partner, args=need(lambda n: n == 1)),
    Op("outer", "torch.outer({0}, {1})", arity=2, partner=any_partner, args=need(lambda n: n == 1)),
    Op("linear", "F.linear({0}, {1})", arity=2, args=need(lambda n: n >= 1),
       partner=lambda r, s, a: (r.choice([1, 2, 3]), s[-1])),
    Op("einsum_t", "torch.einsum('ij->ji', {0})", kind="view", args=need(lambda n: n == 2)),
    Op("einsum_mm", "torch.einsum('ij,jk->ik', {0}, {1})", arity=2, partner=mm_partner),
    Op("einsum_rows", "torch.einsum('ij,ij->i', {0}, {1})", arity=2, partner=same_shape,
       args=need(lambda n: n == 2)),
    Op("tensordot", "torch.tensordot({0}, {1}, dims=1)", arity=2, args=need(lambda n: n >= 1),
       partner=lambda r, s, a: (s[-1], r.choice([1, 2]))),
    Op("kron", "torch.kron({0}, {1})", arity=2, partner=lambda r, s, a: tuple(r.choice([1, 2]) for _ in s)),
    Op("addmm", "torch.addmm({1}, {0}, {2})", arity=3, args=need(lambda n: n == 2),
       partner=lambda r, s, a: r.choice([(s[0], 2), (2,)]) if r.random() < 0.5 else (s[1], 2)),
]

SOFTMAX = [
    Op("softmax", "F.softmax({0}, dim={dim})", args=dim_args),
    Op("softmax_m", "{0}.softmax({dim})", args=dim_args),
    Op("log_softmax", "F.log_softmax({0}, {dim})", args=dim_args),
    Op("softmin", "F.softmin({0}, dim={dim})", args=dim_args),
    Op("normalize", "F.normalize({0}, dim={dim})", args=dim_args, guard=nonzero_norms),
    Op("glu", "F.glu({0}, {dim})", args=dim_args),
    Op("cross_entropy", "F.cross_entropy({0}, {target})", args=need(
        lambda n: n == 2, lambda r, s: {"target": index_tensor(r, max(s[1], 1), s[0])})),
    Op("nll_loss", "F.nll_loss({0}, {target})", args=need(
        lambda n: n == 2, lambda r, s: {"target": index_tensor(r, max(s[1], 1), s[0])})),
    Op("bce_logits", "F.binary_cross_entropy_with_logits({0}, {0}.detach().sigmoid().round())"),
]

INDEXING = [

    Op("index_t", "{0}[{index}]", args=need(
        lambda n: n >= 1, lambda r, s: {"index": index_tensor(r, s[0], r.randint(1, 3))} if s[0] else None)),
    Op("index_mask", "{0}[{mask}]", args=lambda r, s: {"mask": mask_literal(r, s)}),
    Op("index_mixed", "{0}[:, {index}]", args=need(
        lambda n: n >= 2, lambda r, s: {"index": index_tensor(r, s[1], r.randint(1, 3))} if s[1] else None)),
    Op("gather", "{0}.gather({dim}, {index})", args=gather_args),
    Op("take_along_dim", "torch.take_along_dim({0}, {index}, {dim})", args=gather_args),
    Op("scatter", "{0}.scatter({dim}, {index}, {1})", arity=2, args=gather_args, partner=gather_src_partner),
    Op("scatter_add", "torch.scatter_add({0}, {dim}, {index}, {1})", arity=2, args=gather_args,
       partner=gather_src_partner),
    Op("index_select", "{0}.index_select({dim}, {index})", args=lambda r, s: {
        "dim": (d := r.randrange(len(s))), "index": index_tensor(r, s[d], r.randint(1, 3))}
        if s and 0 not in s else None),
    Op("take", "{0}.take({index})", args=lambda r, s: {
        "index": index_tensor(r, int(np.prod(s)), r.randint(1, 3))} if int(np.prod(s)) else None),
    Op("masked_fill", "{0}.masked_fill({mask}, 0.5)", args=lambda r, s: {"mask": mask_literal(r, s)}),
    Op("masked_select", "torch.masked_select({0}, {mask})", args=lambda r, s: {"mask": mask_literal(r, s)}),
]

JOIN = [
    Op("cat", "torch.cat([{0}, {1}], {dim})", arity=2, args=need(lambda n: n >= 1, dim_args),
       partner=cat_partner),
    Op("stack", "torch.stack([{0}, {1}], {dim})", arity=2, partner=same_shape,
       args=lambda r, s: {"dim": r.randint(-len(s) - 1, len(s))}),
    Op("split", "{0}.split({size}, {dim})", kind="multi", args=split_args),
    Op("chunk", "{0}.chunk({n}, {dim})", kind="multi", args=need(
        lambda n: n >= 1, lambda r, s: {"n": r.randint(1, 3), "dim": a_dim(r, s)})),
    Op("unbind", "{0}.unbind({dim})", kind="multi", args=unbind_args),
    Op("tensor_split", "torch.tensor_split({0}, {n}, {dim})", kind="multi", args=need(
        lambda n: n >= 1, lambda r, s: {"n": r.randint(1, 3), "dim": a_dim(r, s)})),
]

VIEWS = [
    Op("view", "{0}.view({shape})", kind="view", args=same_numel_shape),
    Op("reshape", "{0}.reshape({shape})", kind="view", args=same_numel_shape),
    Op("flatten", "{0}.flatten()", kind="view"),
    Op("unflatten", "{0}.unflatten(0, {sizes})", kind="view", args=need(
        lambda n: n >= 1, lambda r, s: {"sizes": (1, s[0]) if r.random() < 0.5 else (s[0], 1)})),
    Op("transpose", "{0}.transpose({d0}, {d1})", kind="view", args=two_dims),
    Op("swapaxes", "torch.swapaxes({0}, {d0}, {d1})", kind="view", args=two_dims),
    Op("t", "{0}.t()", kind="view", args=need(lambda n: n <= 2)),
    Op("T", "{0}.T", kind="view", args=need(lambda n: n == 2)),
    Op("mT", "{0}.mT", kind="view", args=need(lambda n: n >= 2)),
    Op("permute", "{0}.permute({dims})", kind="view", args=permute_args),
    Op("movedim", "{0}.movedim({d0}, {d1})", kind="view",
       args=lambda r, s: {"d0": a_dim(r, s), "d1": a_dim(r, s)}),
    Op("narrow", "{0}.narrow({dim}, {start}, {length})", kind="view", args=narrow_args),
    Op("select", "{0}.select({dim}, {index})", kind="view", args=select_args),
    Op("slice", "{0}[{idx}]", kind="view", args=basic_index),
    Op("diagonal", "{0}.diagonal({offset}, {dim1}, {dim2})", kind="view", args=diagonal_args),
    Op("expand", "{0}.expand({size})", kind="view", args=expand_args),
    Op("broadcast_to", "torch.broadcast_to({0}, {size})", kind="view",
       args=lambda r, s: {"size": tuple(abs(d) for d in expand_args(r, s)["size"])}),
    Op("unsqueeze", "{0}.unsqueeze({dim})", kind="view",
       args=lambda r, s: {"dim": r.randint(-len(s) - 1, len(s))}),
    Op("squeeze", "{0}.squeeze()", kind="view"),
    Op("squeeze_dim", "{0}.squeeze({dim})", kind="view", args=dim_args),
    Op("detach", "{0}.detach()", kind="view"),
    # views made under no_grad: requires_grad is the base's, written later they are refused
    Op("no_grad_view", "{0}.view({shape})", kind="view", args=same_numel_shape, no_grad=True),
    Op("no_grad_slice", "{0}[{idx}]", kind="view", args=basic_index, no_grad=True),
    Op("no_grad_diagonal", "{0}.diagonal({offset}, {dim1}, {dim2})", kind="view", args=diagonal_args,
       no_grad=True),
    Op("no_grad_unbind", "{0}.unbind({dim})", kind="multi", args=unbind_args, no_grad=True),
    Op("view_as", "{0}.view_as({1})", kind="view", arity=2, args=need(lambda n: n >= 1),
       partner=lambda r, s, a: tuple(reversed(s))),
]

INPLACE = [
    Op("add_", "{0}.add_({1})", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("add_scalar_", "{0}.add_(0.5)", kind="inplace"),
    Op("sub_", "{0}.sub_({1}, alpha=2)", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("mul_", "{0}.mul_({1})", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("mul_scalar_", "{0}.mul_(1.5)", kind="inplace"),
    Op("div_", "{0}.div_({1})", kind="inplace", arity=2, partner=broadcast_to_partner, guard=nonzero(1)),
    Op("iadd", "{0} += {1}", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("imul", "{0} *= 2.0", kind="inplace"),
    Op("sigmoid_", "{0}.sigmoid_()", kind="inplace"), Op("tanh_", "{0}.tanh_()", kind="inplace"),
    Op("exp_", "{0}.exp_()", kind="inplace", guard=lambda v, **a: bool(np.all(_np(v[0]) < 5))),
    Op("sin_", "{0}.sin_()", kind="inplace"), Op("neg_", "{0}.neg_()", kind="inplace"),
    Op("abs_", "{0}.abs_()", kind="inplace", guard=away(0.0)),
    Op("relu_", "{0}.relu_()", kind="inplace", guard=away(0.0)),
    Op("square_", "{0}.square_()", kind="inplace"),
    Op("sqrt_", "{0}.sqrt_()", kind="inplace", guard=above(0.05)),
    Op("pow_", "{0}.pow_(2)", kind="inplace"),
    Op("clamp_", "{0}.clamp_({lo}, {hi})", kind="inplace", args=clamp_args, guard=clamp_guard),
    Op("clamp_min_", "{0}.clamp_min_(-0.2)", kind="inplace", guard=away(-0.2)),
    Op("lerp_", "{0}.lerp_({1}, 0.25)", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("addcmul_", "{0}.addcmul_({1}, {2}, value=2.0)", kind="inplace", arity=3, partner=broadcast_to_partner),
    Op("addcdiv_", "{0}.addcdiv_({1}, {2})", kind="inplace", arity=3, partner=broadcast_to_partner,
       guard=nonzero(2)),
    Op("copy_", "{0}.copy_({1})", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("zero_", "{0}.zero_()", kind="inplace"), Op("fill_", "{0}.fill_(0.75)", kind="inplace"),
    Op("setitem", "{0}[{idx}] = {1}", kind="inplace", arity=2, args=basic_index, partner=region_partner),
    Op("setitem_scalar", "{0}[{idx}] = -0.5", kind="inplace", args=basic_index),
    Op("setitem_index", "{0}[{index}] = {1}", kind="inplace", arity=2, args=need(
        lambda n: n >= 1, lambda r, s: {"index": index_tensor(r, s[0], r.randint(1, s[0]), unique=True),
                                        "_rest": s[1:]} if s[0] else None),
       partner=lambda r, s, a: a["_rest"][r.randint(0, len(a["_rest"])):]),
    Op("masked_fill_", "{0}.masked_fill_({mask}, 0.25)", kind="inplace",
       args=lambda r, s: {"mask": mask_literal(r, s)}),
    Op("scatter_", "{0}.scatter_({dim}, {index}, {1})", kind="inplace", arity=2, args=gather_args,
       partner=gather_src_partner),
    Op("scatter_add_", "{0}.scatter_add_({dim}, {index}, {1})", kind="inplace", arity=2, args=gather_args,
       partner=gather_src_partner),
    Op("index_add_", "{0}.index_add_(0, {index}, {1})", kind="inplace", arity=2, args=need(
        lambda n: n >= 1, lambda r, s: {"index": index_tensor(r, s[0], (k := r.randint(1, 3))), "_k": k}
        if s[0] else None), partner=lambda r, s, a: (a["_k"],) + s[1:]),
    Op("unsqueeze_", "{0}.unsqueeze_(0)", kind="inplace"),
    Op("squeeze_", "{0}.squeeze_()", kind="inplace"),
    Op("t_", "{0}.t_()", kind="inplace", args=need(lambda n: n <= 2)),
    Op("detach_", "{0}.detach_()", kind="inplace"),
    Op("no_grad_mul_", "with torch.no_grad(): {0}.mul_(2.0)", kind="inplace"),
    Op("F.relu_", "F.relu_({0})", kind="inplace", guard=away(0.0)),
    Op("F.relu_inplace", "F.relu({0}, inplace=True)", kind="inplace", guard=away(0.0)),
    Op("F.elu_", "F.elu_({0})", kind="inplace", guard=away(0.0)),
    Op("F.leaky_relu_", "F.leaky_relu_({0}, 0.2)", kind="inplace", guard=away(0.0)),
    Op("F.hardtanh_", "F.hardtanh_({0})", kind="inplace", guard=away(-1.0, 1.0)),
    Op("F.threshold_", "F.threshold_({0}, 0.1, 0.0)", kind="inplace", guard=away(0.1)),
    Op("F.celu_", "F.celu_({0})", kind="inplace", guard=away(0.0)),
    Op("F.selu_", "F.selu_({0})", kind="inplace", guard=away(0.0)),
    Op("F.silu_inplace", "F.silu({0}, inplace=True)", kind="inplace"),
    Op("F.hardswish_inplace", "F.hardswish({0}, inplace=True)", kind="inplace", guard=away(-3.0, 3.0)),
    Op("F.mish_inplace", "F.mish({0}, inplace=True)", kind="inplace"),
    Op("F.hardsigmoid_inplace", "F.hardsigmoid({0}, inplace=True)", kind="inplace", guard=away(-3.0, 3.0)),
    Op("F.relu6_inplace", "F.relu6({0}, inplace=True)", kind="inplace", guard=away(0.0, 6.0)),
    Op("F.dropout_inplace", "F.dropout({0}, 0.0, inplace=True)", kind="inplace"),
]

META = [
    Op("retain_grad", "{0}.retain_grad()", kind="stmt"),
    Op("requires_grad_", "{0}.requires_grad_()", kind="stmt"),
]


# --- nn layers --------------------------------------------------------------------------------
def conv_args(nd):
    """Conv{nd}d over (C, L...) or (N, C, L...): kernel fits, stride/padding/dilation/groups vary."""
    def args(r, shape):
        if len(shape) not in (nd + 1, nd + 2) or 0 in shape[-nd - 1:]:
            return None
        cin = shape[-nd - 1]
        groups = r.choice([g for g in (1, 2, 3) if cin % g == 0])
        cout = groups * r.choice([1, 2])
        pad = r.choice([0, 0, 1])
        dil = r.choice([1, 1, 2])
        room = min(shape[-nd:]) + 2 * pad
        ks = [k for k in (1, 2, 3) if dil * (k - 1) + 1 <= room]
        if not ks:
            return None
        return {"cin": cin, "cout": cout, "k": r.choice(ks), "stride": r.choice([1, 2]), "pad": pad,
                "dil": dil, "groups": groups, "bias": r.random() < 0.7}
    return args


def pool_args(nd):
    def args(r, shape):
        if len(shape) not in (nd + 1, nd + 2) or 0 in shape:
            return None
        k = r.randint(1, min(3, min(shape[-nd:])))
        return {"k": k, "stride": r.choice([None, 1, 2]), "pad": r.randint(0, k // 2)}
    return args


def norm_args(ndims):
    def args(r, shape):
        if len(shape) not in ndims or shape[1] == 0:
            return None
        return {"c": shape[1], "affine": r.random() < 0.7, "eval": Code(".eval()" if r.random() < 0.2 else "")}
    return args


def layernorm_args(r, shape):
    if not shape:
        return None
    k = r.randint(1, len(shape))
    return {"shape": tuple(shape[-k:]), "affine": r.random() < 0.7}


def groupnorm_args(r, shape):
    if len(shape) < 2 or shape[1] == 0:
        return None
    c = shape[1]
    return {"g": r.choice([g for g in range(1, c + 1) if c % g == 0]), "c": c, "affine": r.random() < 0.7}


def more_than_one_per_group(values, g, **args):
    """GroupNorm of one value per group gives its bias exactly, up to rounding: a std of that
    (0 in exact arithmetic, where std is not differentiable) has a gradient of rounding noise."""
    shape = tuple(values[0].shape)
    return len(shape) < 2 or int(np.prod(shape[1:])) // g != 1


def inplace_arg(r, shape):
    return {"inplace": r.random() < 0.5}


def image_shape(r):
    """(N, C, H, W) or (C, H, W) with room for a kernel."""
    return tuple(r.choice([1, 2]) for _ in range(r.choice([0, 1]))) + (r.choice([1, 2, 3]), r.randint(2, 4),
                                                                      r.randint(2, 4))


def signal_shape(r):
    """(N, C, L) or (C, L)."""
    return tuple(r.choice([1, 2, 3]) for _ in range(r.choice([0, 1]))) + (r.choice([1, 2, 3]), r.randint(2, 5))


F64 = "dtype=torch.float64"
ACTIVATIONS = [  # (module, kinks, has inplace=)
    ("ReLU()", (0.0,), True), ("ReLU6()", (0.0, 6.0), True), ("LeakyReLU(0.1)", (0.0,), True),
    ("ELU()", (0.0,), True), ("SELU()", (0.0,), True), ("CELU(0.5)", (0.0,), True), ("SiLU()", (), True),
    ("Mish()", (), True), ("Hardswish()", (-3.0, 3.0), True), ("Hardsigmoid()", (-3.0, 3.0), True),
    ("Hardtanh(-0.5, 0.5)", (-0.5, 0.5), True), ("Threshold(0.1, 20.0)", (0.1,), True),
    ("Sigmoid()", (), False), ("Tanh()", (), False), ("GELU()", (), False), ("Softplus()", (), False),
    ("Softsign()", (0.0,), False), ("Tanhshrink()", (), False), ("LogSigmoid()", (), False),
    ("Softshrink(0.3)", (-0.3, 0.3), False), ("Hardshrink(0.3)", (-0.3, 0.3), False),
    ("Identity()", (), False), ("Flatten()", (), False), ("Dropout(0.0)", (), True),
]


def _activation(spec):
    ctor, kinks, has_inplace = spec
    name = "nn." + ctor.split("(")[0]
    if has_inplace:
        head, tail = ctor.split("(", 1)
        template = f"torch.nn.{head}({tail[:-1]}{', ' if tail != ')' else ''}inplace={{inplace}})"
        return Op(name, template, kind="layer", args=inplace_arg, guard=away(*kinks) if kinks else None)
    return Op(name, f"torch.nn.{ctor}", kind="layer", guard=away(*kinks) if kinks else None)


LAYERS = [
    Op("nn.Linear", f"torch.nn.Linear({{fin}}, {{fout}}, bias={{bias}}, {F64})", kind="layer",
       args=need(lambda n: n >= 1, lambda r, s: {"fin": s[-1], "fout": r.randint(1, 3),
                                                  "bias": r.random() < 0.7})),
    Op("nn.Conv1d", f"torch.nn.Conv1d({{cin}}, {{cout}}, {{k}}, stride={{stride}}, padding={{pad}}, "
       f"dilation={{dil}}, groups={{groups}}, bias={{bias}}, {F64})",
       input_shape=signal_shape, kind="layer", args=conv_args(1)),
    Op("nn.Conv2d", f"torch.nn.Conv2d({{cin}}, {{cout}}, {{k}}, stride={{stride}}, padding={{pad}}, "
       f"dilation={{dil}}, groups={{groups}}, bias={{bias}}, {F64})",
       input_shape=image_shape, kind="layer", args=conv_args(2)),
    Op("nn.BatchNorm1d", f"torch.nn.BatchNorm1d({{c}}, affine={{affine}}, {F64}){{eval}}",
       input_shape=signal_shape, kind="layer",
       args=norm_args((2, 3))),
    Op("nn.BatchNorm2d", f"torch.nn.BatchNorm2d({{c}}, affine={{affine}}, {F64}){{eval}}",
       input_shape=image_shape, kind="layer",
       args=norm_args((4,))),
    Op("nn.LayerNorm", f"torch.nn.LayerNorm({{shape}}, elementwise_affine={{affine}}, {F64})", kind="layer",
       args=layernorm_args),
    Op("nn.GroupNorm", f"torch.nn.GroupNorm({{g}}, {{c}}, affine={{affine}}, {F64})",
       input_shape=image_shape, kind="layer",
       args=groupnorm_args, guard=more_than_one_per_group),
    Op("nn.MaxPool1d", "torch.nn.MaxPool1d({k}, {stride}, {pad})",
       input_shape=signal_shape, kind="layer", args=pool_args(1),
       guard=no_ties),
    Op("nn.MaxPool2d", "torch.nn.MaxPool2d({k}, {stride}, {pad})",
       input_shape=image_shape, kind="layer", args=pool_args(2),
       guard=no_ties),
    Op("nn.AvgPool2d", "torch.nn.AvgPool2d({k}, {stride}, {pad})",
       input_shape=image_shape, kind="layer", args=pool_args(2)),
    Op("nn.AdaptiveAvgPool2d", "torch.nn.AdaptiveAvgPool2d({size})",
       input_shape=image_shape, kind="layer", args=need(
        lambda n: n in (3, 4), lambda r, s: {"size": (r.randint(1, 3), r.randint(1, 3))})),
    Op("nn.Softmax", "torch.nn.Softmax({dim})", kind="layer", args=dim_args),
    Op("nn.LogSoftmax", "torch.nn.LogSoftmax({dim})", kind="layer", args=dim_args),
    Op("nn.PReLU", f"torch.nn.PReLU({F64})", kind="layer", guard=away(0.0)),
]
ACTIVATION_LAYERS = [_activation(spec) for spec in ACTIVATIONS]


FAMILIES = {  # family: (weight, ops)
    "unary": (3.0, UNARY), "binary": (2.5, BINARY), "reduction": (2.0, REDUCTIONS),
    "matmul": (1.2, MATMUL), "softmax": (1.0, SOFTMAX), "indexing": (1.2, INDEXING),
    "join": (1.0, JOIN), "view": (3.5, VIEWS), "inplace": (3.5, INPLACE), "layer": (1.5, LAYERS),
    "activation": (1.0, ACTIVATION_LAYERS),
    "meta": (0.5, META),
}


def has_tangent(values, **args):
    """The input carries a tangent (forward mode; guards run on PyTorch's values)."""
    import torch

    return torch.autograd.forward_ad.unpack_dual(values[0]).tangent is not None


# forward mode only (``choose(r, forward=True)``; not in FAMILIES, so the other modes' programs stay the same)
def apart(values, **args):
    """A tangent that is not the primal's own memory (``make_dual(x, x)``: each write is both)."""
    return not np.shares_memory(_np(values[0]), _np(values[1]))


# A tangent given or read is detached: a tangent's own requires_grad/grad_fn differ where PyTorch's formula
# holds an "efficient zero" (README, known differences), and an in-place op's formula writes into the tangent
FORWARD = [
    Op("make_dual", "fwAD.make_dual({0}, {1}.detach())", kind="view", arity=2, partner=same_shape, guard=apart),
    Op("make_dual_of_primal", "fwAD.make_dual(fwAD.unpack_dual({0}).primal, {1}.detach())", kind="view", arity=2,
       partner=same_shape, guard=apart),
    Op("unpack_primal", "fwAD.unpack_dual({0}).primal", kind="view"),
    # the tangent's memory (written in place later, the dual's tangent changes)
    Op("unpack_tangent", "fwAD.unpack_dual({0}).tangent.detach()", guard=has_tangent),
]
OPS = {op.name: op for _, ops in [*FAMILIES.values(), (0, FORWARD)] for op in ops}
assert len(OPS) == sum(len(ops) for _, ops in FAMILIES.values()) + len(FORWARD), "op names must be unique"


def choose(r, forward=False):
    """A random op: a family by weight, then an op of it (forward mode: sometimes a forward-AD op)."""
    if forward and r.random() < 0.06:
        return r.choice(FORWARD)
    names = list(FAMILIES)
    family = r.choices(names, weights=[FAMILIES[n][0] for n in names])[0]
    return r.choice(FAMILIES[family][1])

