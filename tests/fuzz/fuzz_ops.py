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
    call: str = "{m}({0})"  # a layer's call: ``{m}`` the module, ``{0}``, ``{1}`` the inputs, ``{name}`` args

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
    call = op.call.format(*names, m=m, **{k: fmt(v) for k, v in args.items() if not k.startswith("_")})
    lines.append(f"{out} = {call}")
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


def not_in_forward_mode(op):
    """Ops forward mode does not draw (PyTorch bugs, docs/fuzzing.md): the ``*_copy`` ops (``squeeze_copy``,
    ``view_copy``...) and ``frac`` (seed 3750000289), whose output's tangent PyTorch *aliases* to the input's
    (edutorch's has its own), and ``logcumsumexp``, whose tangent PyTorch gets wrong for inputs far below 0
    (seed 2750000323); and, still open, ``cdist``: PyTorch refuses a dual on its ``_cdist_forward``
    kernel but not on its matmul path (chosen by size and ``compute_mode``), edutorch's cdist is a
    composite with a tangent (seed 4750000206)."""
    return op.name.endswith("_copy") or op.name in ("frac", "logcumsumexp", "cdist")


def choose(r, forward=False):
    """A random op: a family by weight, then an op of it (forward mode: sometimes a forward-AD op)."""
    if forward and r.random() < 0.06:
        return r.choice(FORWARD)
    names = list(FAMILIES)
    while True:
        family = r.choices(names, weights=[FAMILIES[n][0] for n in names])[0]
        op = r.choice(FAMILIES[family][1])
        if not (forward and not_in_forward_mode(op)):
            return op



# === more families (issue 23: every differentiable op) ==========================================
# Appended here so that edits to the families above do not conflict; they join FAMILIES and OPS
# at the end of the file.

# --- guards ------------------------------------------------------------------------------------
def within(lo, hi, which=0):
    """Every input strictly inside (lo, hi): an op's domain, away from its edges."""
    def guard(values, **args):
        a = _np(values[which])
        return bool(np.all((a > lo) & (a < hi)))
    return guard


def below(hi, which=0):
    def guard(values, **args):
        return bool(np.all(_np(values[which]) < hi))
    return guard


def quotient_away_from_integers(values, **args):
    """fmod/remainder: x / y at least 1e-6 from an integer (where trunc/floor jump) and y not near 0."""
    a, b = np.broadcast_arrays(_np(values[0]), _np(values[1]))
    if np.any(np.abs(b) < 0.05):
        return False
    q = a / b
    return bool(np.all(np.abs(q - np.round(q)) > 1e-6))


def divisor_guard(s):
    """fmod/remainder by the number ``s``."""
    def guard(values, **args):
        q = _np(values[0]) / s
        return bool(np.all(np.abs(q - np.round(q)) > 1e-6))
    return guard


def singular_values(a):
    return np.linalg.svd(np.asarray(a, dtype=np.float64), compute_uv=False)


def well_conditioned(values, **args):
    """A (batch of) matrices whose smallest singular value is > 0.1 and condition number < 100:
    det/inverse/solve gradients there do not depend on how the singular case is handled."""
    a = _np(values[0])
    if a.ndim < 2 or a.size == 0:
        return True
    s = singular_values(a)
    return bool(np.all(s[..., -1] > 0.1) and np.all(s[..., 0] / s[..., -1] < 100))


def distinct_singular_values(values, **args):
    """SVD's gradient has 1 / (s_i^2 - s_j^2): singular values well apart and away from 0."""
    a = _np(values[0])
    if a.ndim < 2 or a.size == 0:
        return True
    s = singular_values(a)
    return bool(np.all(s > 0.1) and np.all(-np.diff(s, axis=-1) > 0.1))


def distinct_eigenvalues(values, **args):
    """eigh of x + x.mT: eigenvalues well apart (the eigenvectors' gradient has 1 / (l_i - l_j))."""
    a = _np(values[0])
    if a.ndim < 2 or a.size == 0:
        return True
    w = np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2))
    return bool(np.all(np.diff(w, axis=-1) > 0.1))


def positive_det(values, **args):
    a = _np(values[0])
    return well_conditioned(values) and (a.size == 0 or bool(np.all(np.linalg.det(a) > 0.05)))


def apart(values, **args):
    """cdist/dist/pairwise distance: every pair of points (and, for p=1 or inf, every coordinate) apart."""
    a, b = _np(values[0]), _np(values[1])
    if a.size == 0 or b.size == 0 or a.ndim < 1:
        return True
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == b.shape[-1]:
        d = a[..., :, None, :] - b[..., None, :, :]
    else:
        try:
            d = np.broadcast_arrays(a, b)[0] - np.broadcast_arrays(a, b)[1]
        except ValueError:
            return True
    return bool(np.all(np.abs(d) > 1e-3))


def huber_guard(values, delta=1.0, **args):
    d = np.abs(_np(values[0]) - _np(values[1]))
    return bool(np.all(np.abs(d - delta) > 1e-6) and np.all(d > 1e-9))


def row_norms_away(values, max_norm=None, norm_type=2.0, **args):
    """embedding with max_norm: no row's norm within 1e-6 of max_norm (renormalised or not)."""
    if max_norm is None:
        return True
    w = _np(values[0])
    if w.ndim != 2:
        return True
    n = (np.abs(w) ** norm_type).sum(-1) ** (1 / norm_type)
    return bool(np.all(np.abs(n - max_norm) > 1e-6))


def no_operand_aliases_the_output(values, **args):
    """BLAS in-place ops (``addmm_``...): PyTorch does not check that the tensor written shares memory
    with a factor, and its result then depends on the order its kernel reads and writes."""
    out = _np(values[0])
    return not any(np.shares_memory(out, _np(v)) for v in values[1:])


# --- argument helpers -----------------------------------------------------------------------------
def square(r, shape):
    """Applies to a (batch of) square matrices."""
    return {} if len(shape) >= 2 and shape[-1] == shape[-2] else None


def square_shape(r):
    return tuple(r.choice([1, 2]) for _ in range(r.choice([0, 0, 1]))) + (n := r.choice([1, 2, 3]), n)


def matrix_shape(r):
    return tuple(r.choice([1, 2]) for _ in range(r.choice([0, 0, 1]))) + (r.randint(1, 4), r.randint(1, 4))


def shapes_partner(r, shape, args):
    """Further operands of different shapes: ``args['_shapes']``, one per operand, in order."""
    pending = args["_shapes"]
    return pending.pop(0) if pending else None


def dim_of_size(n):
    def args(r, shape):
        dims = [d for d, s in enumerate(shape) if s == n]
        return {"dim": r.choice(dims) - (len(shape) if r.random() < 0.3 else 0)} if dims else None
    return args


def with_three(r):
    from fuzz_program import random_shape

    shape = list(random_shape(r)) or [3]
    shape[r.randrange(len(shape))] = 3
    return tuple(shape)


def correction_args(r, shape):
    return {"dim": a_dim(r, shape), "correction": r.choice([0, 1]), "keepdim": r.random() < 0.4}


# --- pointwise -----------------------------------------------------------------------------------
away_from_tan_poles = lambda v, **a: bool(np.all(np.abs(np.cos(_np(v[0]))) > 0.1))  # noqa: E731
POINTWISE_MORE_SPEC = [  # (name, guard, has an in-place form)
    ("acos", within(-0.95, 0.95), True), ("asin", within(-0.95, 0.95), True),
    ("atanh", within(-0.95, 0.95), True), ("acosh", above(1.05), True), ("arccos", within(-0.95, 0.95), True),
    ("arcsinh", None, True), ("arctan", None, True), ("cosh", None, True), ("sinh", None, True),
    ("tan", away_from_tan_poles, True), ("log2", above(0.05), True), ("log10", above(0.05), True),
    ("exp2", below(5), True), ("erfc", None, True), ("erfinv", within(-0.95, 0.95), True),
    ("logit", within(0.05, 0.95), True), ("sinc", away(0.0), True), ("trunc", away_from_integers(), True),
    ("ceil", away_from_integers(), True), ("frac", away_from_integers(), True), ("fix", away_from_integers(), True),
    ("deg2rad", None, True), ("rad2deg", None, True), ("sgn", away(0.0), True), ("sign", away(0.0), True),
    ("nan_to_num", None, True), ("positive", None, False), ("absolute", away(0.0), True),
    ("floor", away_from_integers(), True), ("round", away_from_integers(0.5), True),
    ("reciprocal", nonzero(0), True), ("rsqrt", above(0.05), True), ("log", above(0.05), True),
    ("log1p", above(-0.9), True), ("expm1", below(5), True), ("erf", None, True), ("cos", None, True),
    ("asinh", None, True), ("atan", None, True), ("negative", None, True),
]
UNARY_MORE = [Op(name, f"torch.{name}({{0}})", guard=g) for name, g, _ in POINTWISE_MORE_SPEC if name not in OPS] + [
    Op("asin_tanh", "torch.asin({0}.tanh() * 0.9)"), Op("acos_sigmoid", "{0}.sigmoid().acos()"),
    Op("atanh_tanh", "torch.atanh(torch.tanh({0}) * 0.9)"), Op("erfinv_tanh", "(torch.tanh({0}) * 0.9).erfinv()"),
    Op("acosh_square", "({0}.square() + 1.1).acosh()"), Op("logit_sigmoid", "{0}.sigmoid().logit()"),
    Op("logit_eps", "torch.logit({0}, {s})", args=scalar(0.1, 0.3), guard=lambda v, s, **a: away(s, 1 - s)(v)),
    Op("nan_to_num_args", "{0}.nan_to_num(0.5, 2.0, -2.0)"),
    Op("clamp_max", "torch.clamp_max({0}, {s})", args=scalar(0.4, -0.6), guard=lambda v, s, **a: away(s)(v)),
    Op("clip", "{0}.clip(-0.6, 0.4)", guard=away(-0.6, 0.4)),
    Op("fmod_scalar", "torch.fmod({0}, {s})", args=scalar(0.7, -1.3),
       guard=lambda v, s, **a: divisor_guard(s)(v)),
    Op("remainder_scalar", "{0}.remainder({s})", args=scalar(0.7, -1.3),
       guard=lambda v, s, **a: divisor_guard(s)(v)),
    Op("float_power", "{0}.float_power({s})", args=scalar(2, 3, 0.5, -1), guard=above(0.05)),
    Op("float_power_int", "torch.float_power({0}, 2)"),
    Op("pow_neg_int", "{0}.pow(-2)", guard=nonzero(0)),
    Op("div_trunc", "torch.div({0}, 0.7, rounding_mode='trunc')", guard=divisor_guard(0.7)),
    Op("div_floor", "{0}.div(-1.3, rounding_mode='floor')", guard=divisor_guard(-1.3)),
    Op("sub_rsub", "torch.rsub({0}, 2.0)"),
    Op("diff", "{0}.diff(dim={dim})", args=need(lambda n: n >= 1, dim_args)),
    Op("diff_n2", "torch.diff({0}, n=2, dim={dim})", args=need(lambda n: n >= 1, dim_args)),
]

INPLACE_MORE = [Op(name + "_", f"{{0}}.{name}_()", kind="inplace", guard=g)
                for name, g, has_inplace in POINTWISE_MORE_SPEC if has_inplace] + [
    Op("logit_eps_", "{0}.logit_(0.2)", kind="inplace", guard=away(0.2, 0.8)),
    Op("clamp_max_", "{0}.clamp_max_(0.4)", kind="inplace", guard=away(0.4)),
    Op("clip_", "{0}.clip_(-0.6, None)", kind="inplace", guard=away(-0.6)),
    Op("fmod_", "{0}.fmod_({1})", kind="inplace", arity=2, partner=broadcast_to_partner,
       guard=quotient_away_from_integers),
    Op("remainder_", "{0}.remainder_({1})", kind="inplace", arity=2, partner=broadcast_to_partner,
       guard=quotient_away_from_integers),
    Op("copysign_", "{0}.copysign_({1})", kind="inplace", arity=2, partner=broadcast_to_partner,
       guard=all_of(nonzero(0), nonzero(1))),
    Op("float_power_", "{0}.float_power_(2)", kind="inplace"),
    Op("xlogy_", "{0}.xlogy_({1}.abs().add(0.1))", kind="inplace", arity=2, partner=broadcast_to_partner,
       guard=lambda v, **a: bool(np.all(np.abs(np.abs(_np(v[1])) - 0.9) > 1e-6))),
    Op("xlogy_scalar_", "{0}.xlogy_(1.7)", kind="inplace"),
    Op("hypot_", "{0}.hypot_({1})", kind="inplace", arity=2, partner=broadcast_to_partner, guard=nonzero(0)),
    Op("atan2_", "{0}.atan2_({1})", kind="inplace", arity=2, partner=broadcast_to_partner,
       guard=all_of(nonzero(0), nonzero(1))),
    Op("fmax_", "{0}.copy_(torch.fmax({0}, {1}))", kind="inplace", arity=2, partner=broadcast_to_partner,
       guard=no_ties_pair),
    Op("div_trunc_", "{0}.div_(0.7, rounding_mode='trunc')", kind="inplace", guard=divisor_guard(0.7)),
    Op("lerp_tensor_", "{0}.lerp_({1}, {1}.sigmoid())", kind="inplace", arity=2, partner=broadcast_to_partner),
    Op("cumsum_", "{0}.cumsum_({dim})", kind="inplace", args=dim_args),
    Op("cumprod_", "{0}.cumprod_({dim})", kind="inplace", args=dim_args),
    Op("tril_", "{0}.tril_({s})", kind="inplace", args=need(lambda n: n >= 2, scalar(0, -1, 1))),
    Op("triu_", "{0}.triu_()", kind="inplace", args=need(lambda n: n >= 2)),
    Op("transpose_", "{0}.transpose_({d0}, {d1})", kind="inplace", args=two_dims),
    Op("swapdims_", "{0}.swapdims_({d0}, {d1})", kind="inplace", args=two_dims),
    Op("addmv_", "{0}.addmv_({1}, {2}, beta=0.5)", kind="inplace", arity=3, args=need(
        lambda n: n == 1, lambda r, s: {"_shapes": [(s[0], k := r.randint(1, 3)), (k,)]}), partner=shapes_partner,
       guard=no_operand_aliases_the_output),
    Op("addr_", "{0}.addr_({1}, {2}, alpha=2.0)", kind="inplace", arity=3, args=need(
        lambda n: n == 2, lambda r, s: {"_shapes": [(s[0],), (s[1],)]}), partner=shapes_partner,
       guard=no_operand_aliases_the_output),
    Op("baddbmm_", "{0}.baddbmm_({1}, {2}, alpha=0.5)", kind="inplace", arity=3, args=need(
        lambda n: n == 3, lambda r, s: {"_shapes": [(s[0], s[1], k := r.randint(1, 2)), (s[0], k, s[2])]}),
       partner=shapes_partner,
       guard=no_operand_aliases_the_output),
    Op("addbmm_", "{0}.addbmm_({1}, {2})", kind="inplace", arity=3, args=need(
        lambda n: n == 2, lambda r, s: {"_shapes": [(b := r.randint(1, 2), s[0], k := r.randint(1, 2)),
                                                    (b, k, s[1])]}), partner=shapes_partner,
       guard=no_operand_aliases_the_output),
    Op("addmm_", "{0}.addmm_({1}, {2}, beta=2.0)", kind="inplace", arity=3, args=need(
        lambda n: n == 2, lambda r, s: {"_shapes": [(s[0], k := r.randint(1, 3)), (k, s[1])]}),
       partner=shapes_partner,
       guard=no_operand_aliases_the_output),
    Op("index_fill_scatter_", "{0}.index_add_(0, {index}, {1}, alpha=-1.5)", kind="inplace", arity=2, args=need(
        lambda n: n >= 1, lambda r, s: {"index": index_tensor(r, s[0], (k := r.randint(1, 3))), "_k": k}
        if s[0] else None), partner=lambda r, s, a: (a["_k"],) + s[1:]),
    Op("nan_to_num_args_", "{0}.nan_to_num_(0.0, 1.0)", kind="inplace"),
    Op("rrelu_", "F.rrelu_({0})", kind="inplace", guard=away(0.0)),
    Op("F.rrelu_inplace", "F.rrelu({0}, 0.1, 0.3, inplace=True)", kind="inplace", guard=away(0.0)),
]

BINARY_MORE = [
    Op("fmod", "torch.fmod({0}, {1})", arity=2, partner=broadcast_partner, guard=quotient_away_from_integers),
    Op("remainder", "{0}.remainder({1})", arity=2, partner=broadcast_partner, guard=quotient_away_from_integers),
    Op("copysign", "torch.copysign({0}, {1})", arity=2, partner=broadcast_partner,
       guard=all_of(nonzero(0), nonzero(1))),
    Op("float_power_t", "{0}.abs().add(0.1).float_power({1})", arity=2, partner=broadcast_partner),
    Op("fmax", "torch.fmax({0}, {1})", arity=2, partner=broadcast_partner, guard=no_ties_pair),
    Op("fmin", "{0}.fmin({1})", arity=2, partner=broadcast_partner, guard=no_ties_pair),
    Op("logaddexp2", "torch.logaddexp2({0}, {1})", arity=2, partner=broadcast_partner),
    Op("xlogy_scalar_self", "torch.xlogy(1.5, {0}.abs().add(0.1))"),
    Op("xlogy_scalar_other", "torch.xlogy({0}, 2.5)"),
    Op("div_trunc_t", "torch.div({0}, {1}, rounding_mode='trunc')", arity=2, partner=broadcast_partner,
       guard=quotient_away_from_integers),
    Op("div_floor_t", "{0}.div({1}, rounding_mode='floor')", arity=2, partner=broadcast_partner,
       guard=quotient_away_from_integers),
    Op("true_divide", "torch.true_divide({0}, {1})", arity=2, partner=broadcast_partner, guard=nonzero(1)),
    Op("ldexp", "torch.ldexp({0}, torch.tensor(2))"),
    Op("lerp_t", "torch.lerp({0}, {1}, {1}.sigmoid())", arity=2, partner=broadcast_partner),
    Op("clamp_both_t", "torch.clamp({0}, {1}, {1} + 0.5)", arity=2, partner=broadcast_partner,
       guard=lambda v, **a: no_ties_pair(v) and no_ties_pair([v[0], v[1] + 0.5])),
    Op("huber_loss", "F.huber_loss({0}, {1}, reduction={red}, delta={delta})", arity=2, partner=same_shape,
       args=lambda r, s: {"red": r.choice(["mean", "sum", "none"]), "delta": r.choice([0.5, 1.0, 2.0])},
       guard=huber_guard),
    Op("kl_div", "F.kl_div({0}.log_softmax(-1), {1}.softmax(-1), reduction={red})", arity=2, partner=same_shape,
       args=need(lambda n: n >= 1, lambda r, s: {"red": r.choice(["batchmean", "sum", "mean", "none"])})),
    Op("kl_div_log_target", "F.kl_div({0}, {1}.log_softmax(-1), reduction={red}, log_target=True)", arity=2,
       partner=same_shape, args=need(lambda n: n >= 1, lambda r, s: {"red": r.choice(["batchmean", "sum", "none"])})),
    Op("kl_div_raw", "F.kl_div({0}, {1}.sigmoid(), reduction='sum')", arity=2, partner=same_shape),
    # BCE of a sigmoid near 0 or 1: 1 - p keeps few digits, and the second derivative (1 / (p (1 - p))^2)
    # magnifies rounding differences of the sigmoid to ~1e-4 (seed 626051003): inputs within +-6
    Op("bce", "F.binary_cross_entropy({0}.sigmoid(), {1}.sigmoid(), reduction={red})", arity=2,
       partner=same_shape, args=lambda r, s: {"red": r.choice(["mean", "sum", "none"])},
       guard=all_of(within(-6, 6), within(-6, 6, which=1))),
    Op("bce_weight", "F.binary_cross_entropy({0}.sigmoid(), {0}.detach().sigmoid().round(), weight={1})",
       arity=2, partner=broadcast_to_partner, guard=within(-6, 6)),
    Op("bce_logits_pos_weight", "F.binary_cross_entropy_with_logits({0}, {1}.sigmoid(), pos_weight={1}.abs())",
       arity=2, partner=same_shape),
    Op("pairwise_distance", "F.pairwise_distance({0}, {1}, p={p})", arity=2, partner=same_shape,
       args=lambda r, s: {"p": r.choice([2.0, 1.0, 3.0])}, guard=apart),
    Op("dist", "torch.dist({0}, {1}, {p})", arity=2, partner=broadcast_partner,
       args=lambda r, s: {"p": r.choice([2, 1, 3, 1.5])}, guard=apart),
    Op("nn.HuberLoss", "torch.nn.HuberLoss(delta=0.5)", kind="layer", arity=2, partner=same_shape,
       call="{m}({0}, {1})", guard=lambda v, **a: huber_guard(v, delta=0.5)),
    Op("nn.KLDivLoss", "torch.nn.KLDivLoss(reduction='batchmean', log_target=True)", kind="layer", arity=2,
       partner=same_shape, call="{m}({0}, {1}.log_softmax(-1))", args=need(lambda n: n >= 1)),
    Op("nn.BCELoss", "torch.nn.BCELoss()", kind="layer", arity=2, partner=same_shape,
       call="{m}({0}.sigmoid(), {1}.sigmoid())", guard=all_of(within(-6, 6), within(-6, 6, which=1))),
]

REDUCTIONS_MORE = [
    Op("cummin", "{0}.cummin({dim}).values", args=dim_args, guard=no_ties),
    Op("cummin_fn", "torch.cummin({0}, {dim})[0]", args=dim_args, guard=no_ties),
    Op("logcumsumexp", "{0}.logcumsumexp({dim})", args=dim_args),
    Op("nanmean", "{0}.nanmean({dim}, keepdim={keepdim})", args=dims_keep_args),
    Op("nansum", "torch.nansum({0}, {dim})", args=dims_keep_args),
    Op("var_mean", "torch.var_mean({0}, {dim}, correction={correction}, keepdim={keepdim})", kind="multi",
       args=correction_args),
    Op("std_mean", "torch.std_mean({0}, {dim}, correction={correction})", kind="multi", args=correction_args,
       guard=spread),
    Op("std_all", "{0}.std()", guard=lambda v, **a: v[0].numel() > 1),
    Op("var_all", "torch.var({0}, correction=0)"),
    Op("aminmax", "torch.aminmax({0}, dim={dim}, keepdim={keepdim})", kind="multi", args=dim_keep_args,
       guard=no_ties),
    Op("aminmax_all", "{0}.aminmax()", kind="multi", guard=no_ties),
    Op("msort", "torch.msort({0})", guard=no_ties),
    Op("sum_to_size", "{0}.sum_to_size({size})", args=lambda r, s: {"size": tuple(
        1 if r.random() < 0.5 else n for n in s[r.randint(0, len(s)):])}),
    Op("prod_all", "{0}.prod()"), Op("mean_all", "torch.mean({0})"),
    Op("logsumexp_dims", "torch.logsumexp({0}, {dim}, keepdim={keepdim})", args=dims_keep_args),
    Op("norm_p", "{0}.norm({p}, {dim})", args=lambda r, s: {"p": r.choice([1, 3, "fro"]), "dim": a_dim(r, s)},
       guard=all_of(away(0.0), nonzero_norms)),
    Op("matrix_norm", "torch.linalg.matrix_norm({0}, {ord})", args=need(
        lambda n: n >= 2, lambda r, s: {"ord": r.choice(["fro", 1, -1, float("inf")])}),
       guard=lambda v, **a: no_ties([v[0].abs().sum(-1)]) and no_ties([v[0].abs().sum(-2)])
       and bool(np.all(_np(v[0]) != 0))),
    Op("matrix_norm_nuc", "torch.linalg.matrix_norm({0}, {ord})", args=need(
        lambda n: n >= 2, lambda r, s: {"ord": r.choice(["nuc", 2, -2])}), guard=distinct_singular_values),
    Op("linalg_norm", "torch.linalg.norm({0})", guard=lambda v, **a: bool(np.any(_np(v[0]) != 0))),
    Op("trapezoid", "torch.trapezoid({0}, dim={dim})", args=dim_args),
    Op("trapezoid_dx", "torch.trapezoid({0}, dx=0.5)"),
    Op("trapezoid_x", "torch.trapezoid({0}, {1})", arity=2, partner=same_shape),
    Op("cumulative_trapezoid", "torch.cumulative_trapezoid({0}, dim={dim})", args=dim_args),
    Op("cumulative_trapezoid_x", "torch.cumulative_trapezoid({0}, {1})", arity=2,
       partner=lambda r, s, a: s[-1:]),
]

LINALG = [
    Op("det", "torch.det({0})", args=square, input_shape=square_shape, guard=well_conditioned),
    Op("linalg_det", "torch.linalg.det({0})", args=square, input_shape=square_shape, guard=well_conditioned),
    Op("logdet", "{0}.logdet()", args=square, input_shape=square_shape, guard=positive_det),
    Op("slogdet", "torch.linalg.slogdet({0})", kind="multi", args=square, input_shape=square_shape,
       guard=well_conditioned),
    Op("slogdet_t", "{0}.slogdet()[1]", args=square, input_shape=square_shape, guard=well_conditioned),
    Op("inverse", "{0}.inverse()", args=square, input_shape=square_shape, guard=well_conditioned),
    Op("linalg_inv", "torch.linalg.inv({0})", args=square, input_shape=square_shape, guard=well_conditioned),
    Op("pinverse", "torch.pinverse({0})", args=need(lambda n: n >= 2), input_shape=matrix_shape,
       guard=well_conditioned),
    Op("linalg_pinv", "torch.linalg.pinv({0})", args=need(lambda n: n >= 2), input_shape=matrix_shape,
       guard=well_conditioned),
    Op("matrix_exp", "torch.matrix_exp({0} * 0.5)", args=square, input_shape=square_shape),
    Op("linalg_matrix_exp", "torch.linalg.matrix_exp({0})", args=square, input_shape=square_shape,
       guard=lambda v, **a: bool(np.all(np.abs(_np(v[0])) < 1.5))),
    Op("matrix_power", "{0}.matrix_power({n})", args=lambda r, s: square(r, s) is not None and {
        "n": r.choice([0, 1, 2, 3, -1, -2])} or None, input_shape=square_shape,
       guard=lambda v, n, **a: n >= 0 or well_conditioned(v)),
    Op("solve", "torch.linalg.solve({0}, {1})", arity=2, args=square, input_shape=square_shape,
       partner=lambda r, s, a: r.choice([s[:-1], s[:-1] + (r.randint(1, 2),), s[-1:] + (2,)]),
       guard=well_conditioned),
    Op("qr_q", "torch.linalg.qr({0}).Q.square()", args=need(lambda n: n >= 2), input_shape=matrix_shape,
       guard=distinct_singular_values),
    Op("qr_r", "torch.linalg.qr({0}, {mode}).R.square()", args=need(
        lambda n: n >= 2, lambda r, s: {"mode": r.choice(["reduced", "complete", "r"])}),
       input_shape=matrix_shape, guard=distinct_singular_values),
    Op("qr_qr", "(lambda q, r: q @ r)(*torch.qr({0}))", args=need(lambda n: n >= 2), input_shape=matrix_shape,
       guard=distinct_singular_values),
    Op("svdvals", "torch.linalg.svdvals({0})", args=need(lambda n: n >= 2), input_shape=matrix_shape,
       guard=distinct_singular_values),
    Op("svd_s", "torch.svd({0}).S", args=need(lambda n: n >= 2), input_shape=matrix_shape,
       guard=distinct_singular_values),
    Op("svd_u", "torch.linalg.svd({0}, full_matrices={full}).U.square()", args=need(
        lambda n: n >= 2, lambda r, s: {"full": r.random() < 0.2}), input_shape=matrix_shape,
       guard=distinct_singular_values),
    Op("svd_vh", "torch.linalg.svd({0}, full_matrices=False).Vh.square()", args=need(lambda n: n >= 2),
       input_shape=matrix_shape, guard=distinct_singular_values),
    Op("svd_rebuild", "(lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(*torch.linalg.svd({0}, full_matrices=False))",
       args=need(lambda n: n >= 2), input_shape=matrix_shape, guard=distinct_singular_values),
    Op("eigvalsh", "torch.linalg.eigvalsh({0} + {0}.mT)", args=square, input_shape=square_shape,
       guard=distinct_eigenvalues),
    Op("eigh_vectors", "torch.linalg.eigh({0} + {0}.mT).eigenvectors.square()", args=square,
       input_shape=square_shape, guard=distinct_eigenvalues),
    Op("cross", "torch.cross({0}, {1}, dim={dim})", arity=2, args=dim_of_size(3), input_shape=with_three,
       partner=same_shape),
    Op("linalg_cross", "torch.linalg.cross({0}, {1})", arity=2, args=need(lambda n: n >= 1), input_shape=with_three,
       partner=broadcast_partner),
    Op("cdist", "torch.cdist({0}, {1}, p={p})", arity=2, args=need(
        lambda n: n >= 2, lambda r, s: {"p": r.choice([2.0, 2.0, 1.0, 3.0, float("inf")])}),
       input_shape=matrix_shape, partner=lambda r, s, a: s[:-2] + (r.randint(1, 3), s[-1]), guard=apart),
    Op("addmv", "torch.addmv({0}, {1}, {2}, beta={b}, alpha={a})", arity=3, args=need(
        lambda n: n <= 1, lambda r, s: {"_shapes": [(s[0] if s else r.randint(1, 3), k := r.randint(1, 3)), (k,)],
                                        "b": r.choice([1, 0.5]), "a": r.choice([1, -2.0])}), partner=shapes_partner),
    Op("addr", "torch.addr({0}, {1}, {2})", arity=3, args=need(
        lambda n: n == 2, lambda r, s: {"_shapes": [(s[0],), (s[1],)]}), partner=shapes_partner),
    Op("addbmm", "torch.addbmm({0}, {1}, {2}, alpha=0.5)", arity=3, args=need(
        lambda n: n == 2, lambda r, s: {"_shapes": [(b := r.randint(1, 2), s[0], k := r.randint(1, 2)),
                                                    (b, k, s[1])]}), partner=shapes_partner),
    Op("baddbmm", "torch.baddbmm({0}, {1}, {2}, beta={b})", arity=3, args=need(
        lambda n: n == 3, lambda r, s: {"_shapes": [(s[0], s[1], k := r.randint(1, 2)), (s[0], k, s[2])],
                                        "b": r.choice([1, 0.0, 2.0])}), partner=shapes_partner),
    Op("inner", "torch.inner({0}, {1})", arity=2, partner=lambda r, s, a: r.choice([s[-1:], (2,) + s[-1:], ()])
       if s else ()),
    Op("vdot", "torch.vdot({0}, {1})", arity=2, args=need(lambda n: n == 1), partner=same_shape),
    Op("ger", "{0}.ger({1})", arity=2, args=need(lambda n: n == 1), partner=any_partner),
    Op("chain_matmul", "torch.linalg.multi_dot([{0}, {1}, {2}])", arity=3, args=need(
        lambda n: n == 2, lambda r, s: {"_shapes": [(s[1], k := r.randint(1, 3)), (k, r.randint(1, 3))]}),
       partner=shapes_partner),
    # no empty block: PyTorch's backward then reads the next block's gradient from the wrong rows
    Op("block_diag", "torch.block_diag({0}, {1})", arity=2, args=need(lambda n: n <= 2),
       partner=lambda r, s, a: r.choice([(r.randint(1, 3), r.randint(1, 3)), (2,), ()]),
       guard=lambda v, **a: all(t.numel() for t in v)),
    # no vander: PyTorch's backward of it refuses (it writes a view of its result that a cumprod saved)
    Op("linalg_vecdot", "torch.linalg.vecdot({0}, {1})", arity=2, partner=broadcast_to_partner,
       args=need(lambda n: n >= 1)),
    Op("tensordot_2", "torch.tensordot({0}, {1}, dims=([0], [{d}]))", arity=2,
       args=need(lambda n: n >= 1, lambda r, s: {"d": r.choice([1, -1])}), partner=lambda r, s, a: (2, s[0])),
]

SHAPE_MORE = [
    Op("diag", "torch.diag({0}, {s})", args=need(lambda n: n in (1, 2), scalar(0, 1, -1))),
    Op("diag_embed", "torch.diag_embed({0}, {s})", args=need(lambda n: n >= 1, scalar(0, 1, -1))),
    Op("diag_embed_dims", "{0}.diag_embed(0, -1, 0)", args=need(lambda n: n >= 1)),
    Op("diagflat", "torch.diagflat({0}, {s})", args=scalar(0, 1, -2)),
    Op("diagonal_scatter", "torch.diagonal_scatter({0}, {1}, {offset}, {dim1}, {dim2})", arity=2,
       args=diagonal_args, partner=lambda r, s, a: np.empty(s).diagonal(a["offset"], a["dim1"], a["dim2"]).shape),
    Op("select_scatter", "torch.select_scatter({0}, {1}, {dim}, {index})", arity=2, args=select_args,
       partner=lambda r, s, a: s[:a["dim"]] + s[a["dim"] + 1:]),
    Op("slice_scatter", "torch.slice_scatter({0}, {1}, {dim}, {start}, {end}, {step})", arity=2,
       args=lambda r, s: {"dim": (d := r.randrange(len(s))), "start": (a := r.randint(0, s[d])),
                          "end": (b := r.randint(a, s[d])), "step": (st := r.choice([1, 2])),
                          "_shape": s[:d] + (len(range(a, b, st)),) + s[d + 1:]} if s else None,
       partner=lambda r, s, a: a["_shape"]),
    Op("repeat_interleave", "{0}.repeat_interleave({n}, {dim})", args=lambda r, s: {
        "n": r.choice([1, 2, 3]), "dim": a_dim(r, s) if s and r.random() < 0.7 else None}),
    Op("repeat_interleave_t", "torch.repeat_interleave({0}, {reps}, dim={dim})", args=lambda r, s: {
        "dim": (d := r.randrange(len(s))), "reps": Code(f"torch.tensor({[r.randint(0, 2) for _ in range(s[d])]})")}
       if s else None),
    Op("rot90", "torch.rot90({0}, {k}, {dims})", args=need(lambda n: n >= 2, lambda r, s: {
        "k": r.choice([1, 2, 3, -1]), "dims": r.sample(range(len(s)), 2)})),
    Op("tile", "{0}.tile({reps})", args=lambda r, s: {
        "reps": tuple(r.choice([1, 2]) for _ in range(r.randint(1, len(s) + 1)))}),
    Op("fliplr", "torch.fliplr({0})", args=need(lambda n: n >= 2)),
    Op("flipud", "{0}.flipud()", args=need(lambda n: n >= 1)),
    Op("hstack", "torch.hstack([{0}, {1}])", arity=2, partner=lambda r, s, a: cat_partner(r, s, {"dim": 1 if len(s) > 1 else 0})),
    Op("vstack", "torch.vstack([{0}, {1}])", arity=2, partner=lambda r, s, a: s if len(s) < 2 else cat_partner(r, s, {"dim": 0})),
    Op("row_stack", "torch.row_stack(({0}, {1}))", arity=2, partner=same_shape),
    Op("dstack", "torch.dstack([{0}, {1}])", arity=2, partner=same_shape),
    Op("column_stack", "torch.column_stack([{0}, {1}])", arity=2, args=need(lambda n: n <= 2),
       partner=lambda r, s, a: s[:1] + ((r.randint(1, 2),) if r.random() < 0.5 else ()) if s else ()),
    Op("atleast_1d", "torch.atleast_1d({0})", kind="view"),
    Op("atleast_2d", "torch.atleast_2d({0})", kind="view"),
    Op("atleast_3d", "torch.atleast_3d({0})", kind="view"),
    Op("cartesian_prod", "torch.cartesian_prod({0}, {1})", arity=2, args=need(lambda n: n == 1),
       partner=any_partner),
    Op("hsplit", "torch.hsplit({0}, {n})", kind="multi", args=need(
        lambda n: n >= 1, lambda r, s: {"n": r.choice([d for d in (1, 2, 3) if s[min(1, len(s) - 1)] % d == 0])})),
    Op("vsplit", "{0}.vsplit({n})", kind="multi", args=need(
        lambda n: n >= 2, lambda r, s: {"n": r.choice([d for d in (1, 2, 3) if s[0] % d == 0] or [1])})),
    Op("dsplit", "torch.dsplit({0}, {sections})", kind="multi", args=need(
        lambda n: n >= 3, lambda r, s: {"sections": sorted(r.sample(range(s[2] + 1), min(r.randint(1, 2), s[2] + 1)))})),
    Op("split_with_sizes", "{0}.split_with_sizes({size}, {dim})", kind="multi",
       args=lambda r, s: (a := split_args(r, s)) and {**a, "size": a["size"] if isinstance(a["size"], list)
                                                      else [s[a["dim"]]]}),
    Op("unfold_view", "{0}.unfold({dim}, {size}, {step})", kind="view", args=lambda r, s: {
        "dim": (d := a_dim(r, s)), "size": r.randint(0, s[d] if s else 1), "step": r.choice([1, 2])}),
    Op("swapdims", "{0}.swapdims({d0}, {d1})", kind="view", args=two_dims),
    Op("moveaxis", "torch.moveaxis({0}, {d0}, {d1})", kind="view",
       args=lambda r, s: {"d0": a_dim(r, s), "d1": a_dim(r, s)}),
    Op("movedim_list", "{0}.movedim({src}, {dst})", kind="view", args=need(lambda n: n >= 2, lambda r, s: {
        "src": r.sample(range(len(s)), 2), "dst": r.sample(range(len(s)), 2)})),
    Op("ravel", "{0}.ravel()", kind="view"),
    Op("flatten_dims", "{0}.flatten({d0}, {d1})", kind="view", args=need(lambda n: n >= 2, lambda r, s: {
        "d0": (a := r.randrange(len(s))), "d1": r.randrange(a, len(s))})),
    Op("reshape_as", "{0}.reshape_as({1})", kind="view", arity=2, args=need(lambda n: n >= 1),
       partner=lambda r, s, a: (int(np.prod(s)),)),
    Op("expand_as", "{0}.expand_as({1})", kind="view", arity=2,
       partner=lambda r, s, a: (2,) + s if len(s) < 4 else s),
    Op("T_3d", "{0}.permute(*reversed(range({0}.dim())))", kind="view"),
    Op("contiguous", "{0}.contiguous()", kind="view"),
    Op("type_as", "{0}.type_as({1})", kind="view", arity=2, partner=any_partner),
    Op("split_copy", "torch.split_copy({0}, {size}, {dim})", kind="multi", args=split_args),
    Op("unbind_copy", "torch.unbind_copy({0}, {dim})", kind="multi", args=unbind_args),
    Op("diagonal_copy", "torch.diagonal_copy({0}, {offset}, {dim1}, {dim2})", args=diagonal_args),
    Op("t_copy", "torch.t_copy({0})", args=need(lambda n: n <= 2)),
    Op("transpose_copy", "torch.transpose_copy({0}, {d0}, {d1})", args=two_dims),
    Op("permute_copy", "torch.permute_copy({0}, {dims})", args=permute_args),
    Op("view_copy", "torch.view_copy({0}, {shape})", args=same_numel_shape),
    Op("expand_copy", "torch.expand_copy({0}, {size})", args=expand_args),
    Op("unsqueeze_copy", "torch.unsqueeze_copy({0}, {dim})",
       args=lambda r, s: {"dim": r.randint(-len(s) - 1, len(s))}),
    Op("squeeze_copy", "torch.squeeze_copy({0})"),
    Op("select_copy", "torch.select_copy({0}, {dim}, {index})", args=select_args),
    Op("narrow_copy", "torch.narrow_copy({0}, {dim}, {start}, {length})", args=narrow_args),
    Op("slice_copy", "torch.slice_copy({0}, {dim}, {start}, {end})", args=lambda r, s: {
        "dim": (d := r.randrange(len(s))), "start": r.randint(-s[d], s[d]), "end": r.randint(-s[d], s[d] + 1)}
       if s else None),
    # no detach_copy: PyTorch's requires grad, with a node whose backward is not implemented
    Op("alias_copy", "torch.alias_copy({0})"),
    Op("unfold_copy", "torch.unfold_copy({0}, {dim}, {size}, {step})", args=lambda r, s: {
        "dim": (d := a_dim(r, s)), "size": r.randint(0, s[d] if s else 1), "step": r.choice([1, 2])}),
    Op("index_add_fn", "torch.index_add({0}, 0, {index}, {1}, alpha=2)", arity=2, args=need(
        lambda n: n >= 1, lambda r, s: {"index": index_tensor(r, s[0], (k := r.randint(1, 3))), "_k": k}
        if s[0] else None), partner=lambda r, s, a: (a["_k"],) + s[1:]),
    Op("concat", "torch.concat(({0}, {1}), {dim})", arity=2, args=need(lambda n: n >= 1, dim_args),
       partner=cat_partner),
    Op("stack_three", "torch.stack([{0}, {1}, {0}], {dim})", arity=2, partner=same_shape,
       args=lambda r, s: {"dim": r.randint(-len(s) - 1, len(s))}),
]


# --- nn.functional with tensor operands (weights, biases, targets can be views or written later) ---
def fconv_args(nd, transposed=False, bias=False):
    """F.conv{nd}d / F.conv_transpose2d: the weight (and bias) as operands, ``_shapes`` in order."""
    def args(r, shape):
        a = conv_args(nd)(r, shape)
        if a is None:
            return None
        cin, cout, g, k = a["cin"], a["cout"], a["groups"], a["k"]
        if transposed:
            a["opad"] = r.choice([o for o in (0, 1) if o < max(a["stride"], a["dil"])])
            w = (cin, cout // g) + (k,) * nd
        else:
            if r.random() < 0.25:
                a["pad"] = r.choice(["same", "valid"])
                if a["pad"] == "same":
                    a["stride"] = 1
            w = (cout, cin // g) + (k,) * nd
        a["_shapes"] = [w, (cout,)] if bias else [w]
        return a
    return args


def embedding_args(r, shape):
    if len(shape) != 2 or 0 in shape:
        return None
    v = shape[0]
    ishape = r.choice([(r.randint(1, 4),), (r.randint(1, 2), r.randint(1, 3))])
    idx = np.array([r.randrange(v) for _ in range(int(np.prod(ishape)))]).reshape(ishape)
    return {"index": Code(f"torch.tensor({idx.tolist()!r})"), "pidx": r.choice([None, None, 0, -1]),
            "max_norm": r.choice([None, None, 1.0, 2.0]), "norm_type": r.choice([2.0, 1.0]),
            "freq": False}  # scale_grad_by_freq: PyTorch's double backward drops the scaling (edutorch keeps it)


def interpolate_args(r, shape):
    modes = {3: ["nearest", "linear", "area", "nearest-exact"],
             4: ["nearest", "bilinear", "bicubic", "area", "nearest-exact"]}.get(len(shape))
    if not modes or 0 in shape:
        return None
    mode = r.choice(modes)
    nd = len(shape) - 2
    out = {"mode": mode, "align": r.choice([None, True, False]) if mode in ("linear", "bilinear", "bicubic") else None}
    if r.random() < 0.5:
        out["size"] = tuple(r.randint(1, 5) for _ in range(nd))
        out["scale"] = None
    else:
        out["size"] = None
        out["scale"] = r.choice([2, 0.5, 1.5, 2.5, 3]) if r.random() < 0.7 else tuple(
            r.choice([2, 0.5, 1.5]) for _ in range(nd))
    out["recompute"] = r.choice([None, True]) if out["scale"] is not None else None
    return out


def pad_args(r, shape):
    mode = r.choice(["constant", "constant", "reflect", "replicate", "circular"])
    if mode == "constant":
        k = r.randint(1, max(len(shape), 1)) if shape else 0
        if not k:
            return None
        return {"pad": tuple(r.randint(-1, 2) for _ in range(2 * k)), "mode": mode, "value": r.choice([0.0, 0.5])}
    k = len(shape) - 2 if len(shape) >= 3 and r.random() < 0.5 else len(shape) - 1
    if k not in (1, 2) or 0 in shape:
        return None
    sizes = shape[-k:][::-1]  # pad lists the last dim first
    limit = {"reflect": lambda n: n - 1, "replicate": lambda n: 2, "circular": lambda n: n}[mode]
    pads = tuple(r.randint(0, min(2, limit(n))) for n in sizes for _ in range(2))
    return {"pad": pads, "mode": mode, "value": None}


def sdpa_args(r, shape):
    if len(shape) < 2 or 0 in shape:
        return None
    length, e = shape[-2], shape[-1]
    s = r.randint(1, 3)
    out = {"_shapes": [shape[:-2] + (s, e), shape[:-2] + (s, r.randint(1, 3))], "causal": False, "mask": None,
           "scale": r.choice([None, 0.7])}
    c = r.random()
    if c < 0.3:
        out["mask"] = mask_literal(r, (length, s))
    elif c < 0.5:
        out["causal"] = True
    elif c < 0.7:
        out["_shapes"].append((length, s))  # a float mask, an operand
    return out


def fold_args(r, shape):
    """F.fold of (N, C*k*k, L) or (C*k*k, L) into an output whose blocks number L."""
    if len(shape) not in (2, 3) or 0 in shape:
        return None
    d, blocks = shape[-2], shape[-1]
    k = r.choice([k for k in (1, 2) if d % (k * k) == 0])
    oh = r.choice([f for f in range(1, blocks + 1) if blocks % f == 0])
    return {"size": (oh + k - 1, blocks // oh + k - 1), "k": k}


def pool2d_args(r, shape):
    a = pool_args(2)(r, shape)
    if a is None:
        return None
    a["ceil"] = r.random() < 0.4
    a["include"] = r.random() < 0.5
    a["divisor"] = r.choice([None, None, 2])
    return a


def maxpool_args(nd):
    def args(r, shape):
        a = pool_args(nd)(r, shape)
        if a is None:
            return None
        a["dil"] = r.choice([1, 1, 2])
        if a["dil"] * (a["k"] - 1) + 1 > min(shape[-nd:]) + 2 * a["pad"]:
            a["dil"] = 1
        a["ceil"] = r.random() < 0.4
        return a
    return args


def channels(r, shape):
    return {"c": shape[1]} if len(shape) >= 2 and shape[1] else None


def cross_entropy_args(r, shape):
    """Class targets (N,) or (N, d) with weight, ignore_index, label_smoothing, reduction."""
    if len(shape) not in (2, 3) or 0 in shape:
        return None
    c = shape[1]
    tshape = (shape[0],) + shape[2:]
    t = np.array([r.randrange(c) for _ in range(int(np.prod(tshape)))]).reshape(tshape)
    return {"target": Code(f"torch.tensor({t.tolist()!r})"), "ignore": r.choice([-100, 0]),
            "smooth": r.choice([0.0, 0.0, 0.2]), "red": r.choice(["mean", "sum", "none"]), "_shapes": [(c,)]}


def bilinear_args(r, shape):
    if not shape:
        return None
    in2, out = r.randint(1, 3), r.randint(1, 3)
    return {"_shapes": [shape[:-1] + (in2,), (out, shape[-1], in2), (out,)]}


def norm_operands(r, shape):
    a = layernorm_args(r, shape)
    if a is None:
        return None
    a["_shapes"] = [a["shape"], a["shape"]]
    return a


def groupnorm_operands(r, shape):
    a = groupnorm_args(r, shape)
    if a is None:
        return None
    a["_shapes"] = [(a["c"],), (a["c"],)]
    return a


def batchnorm_operands(r, shape):
    if len(shape) < 2 or shape[1] == 0:
        return None
    return {"c": shape[1], "train": r.random() < 0.7, "_shapes": [(shape[1],), (shape[1],)]}


FUNCTIONAL = [
    Op("F.conv1d", "F.conv1d({0}, {1}, stride={stride}, padding={pad}, dilation={dil}, groups={groups})", arity=2,
       input_shape=signal_shape, args=fconv_args(1), partner=shapes_partner),
    Op("F.conv1d_bias", "F.conv1d({0}, {1}, {2}, {stride}, {pad}, {dil}, {groups})", arity=3,
       input_shape=signal_shape, args=fconv_args(1, bias=True), partner=shapes_partner),
    Op("F.conv2d", "F.conv2d({0}, {1}, stride={stride}, padding={pad}, dilation={dil}, groups={groups})", arity=2,
       input_shape=image_shape, args=fconv_args(2), partner=shapes_partner),
    Op("F.conv2d_bias", "F.conv2d({0}, {1}, {2}, stride={stride}, padding={pad}, dilation={dil}, groups={groups})",
       arity=3, input_shape=image_shape, args=fconv_args(2, bias=True), partner=shapes_partner),
    Op("F.conv_transpose2d", "F.conv_transpose2d({0}, {1}, {2}, stride={stride}, padding={pad}, "
       "output_padding={opad}, groups={groups}, dilation={dil})", arity=3, input_shape=image_shape,
       args=fconv_args(2, transposed=True, bias=True), partner=shapes_partner),
    Op("F.conv_transpose2d_nobias", "F.conv_transpose2d({0}, {1}, stride={stride}, padding={pad}, "
       "output_padding={opad}, groups={groups}, dilation={dil})", arity=2, input_shape=image_shape,
       args=fconv_args(2, transposed=True), partner=shapes_partner),
    Op("F.embedding", "F.embedding({index}, {0}, padding_idx={pidx}, max_norm={max_norm}, norm_type={norm_type}, "
       "scale_grad_by_freq={freq})", args=embedding_args, input_shape=lambda r: (r.randint(1, 4), r.randint(1, 3)),
       guard=row_norms_away),
    Op("F.interpolate", "F.interpolate({0}, size={size}, scale_factor={scale}, mode={mode}, align_corners={align}, "
       "recompute_scale_factor={recompute})", args=interpolate_args,
       input_shape=lambda r: r.choice([image_shape, signal_shape])(r) if r.random() < 0.5 else (1,) + image_shape(r)[-3:]),
    Op("F.pad", "F.pad({0}, {pad}, mode={mode}, value={value})", args=pad_args),
    Op("F.pixel_shuffle", "F.pixel_shuffle({0}, {f})", args=lambda r, s: {"f": r.choice(
        [f for f in (1, 2) if s[-3] % (f * f) == 0])} if len(s) >= 3 else None,
       input_shape=lambda r: (r.choice([1, 2]), r.choice([1, 4]), r.randint(1, 3), r.randint(1, 3))),
    Op("F.pixel_unshuffle", "F.pixel_unshuffle({0}, {f})", args=lambda r, s: {"f": r.choice(
        [f for f in (1, 2) if s[-1] % f == 0 and s[-2] % f == 0])} if len(s) >= 3 else None,
       input_shape=lambda r: (r.choice([1, 2]), r.choice([1, 2]), r.choice([2, 4]), r.choice([2, 4]))),
    Op("F.unfold", "F.unfold({0}, {k}, dilation={dil}, padding={pad}, stride={stride})", args=need(
        lambda n: n in (3, 4), lambda r, s: {"k": r.randint(1, min(2, min(s[-2:]) or 1)),
                                            "dil": 1, "pad": r.choice([0, 1]), "stride": r.choice([1, 2])}
        if 0 not in s else None), input_shape=image_shape),
    Op("F.fold", "F.fold({0}, {size}, {k})", args=fold_args),
    Op("F.sdpa", "F.scaled_dot_product_attention({0}, {1}, {2}, attn_mask={mask}, is_causal={causal}, "
       "scale={scale})", arity=3, args=sdpa_args, partner=shapes_partner),
    Op("F.sdpa_float_mask", "F.scaled_dot_product_attention({0}, {1}, {2}, attn_mask={3})", arity=4,
       args=lambda r, s: (a := sdpa_args(r, s)) and len(a["_shapes"]) == 3 and a or None, partner=shapes_partner),
    Op("F.bilinear", "F.bilinear({0}, {1}, {2}, {3})", arity=4, args=bilinear_args, partner=shapes_partner),
    Op("F.bilinear_nobias", "F.bilinear({0}, {1}, {2})", arity=3, args=bilinear_args, partner=shapes_partner),
    Op("F.layer_norm", "F.layer_norm({0}, {shape}, {1}, {2}, eps=1e-3)", arity=3, args=norm_operands,
       partner=shapes_partner),
    Op("F.group_norm", "F.group_norm({0}, {g}, {1}, {2})", arity=3, args=groupnorm_operands,
       partner=shapes_partner, input_shape=image_shape, guard=more_than_one_per_group),
    Op("F.batch_norm", "F.batch_norm({0}, torch.zeros({c}, dtype=torch.float64), torch.ones({c}, "
       "dtype=torch.float64), {1}, {2}, training={train}, momentum=0.3)", arity=3, args=batchnorm_operands,
       partner=shapes_partner, input_shape=signal_shape),
    Op("F.batch_norm_plain", "F.batch_norm({0}, None, None, training=True)", args=need(lambda n: n >= 2),
       input_shape=image_shape),
    Op("F.avg_pool2d", "F.avg_pool2d({0}, {k}, {stride}, {pad}, ceil_mode={ceil}, count_include_pad={include}, "
       "divisor_override={divisor})", args=pool2d_args, input_shape=image_shape),
    Op("F.max_pool2d", "F.max_pool2d({0}, {k}, {stride}, {pad}, dilation={dil}, ceil_mode={ceil})",
       args=maxpool_args(2), input_shape=image_shape, guard=no_ties),
    Op("F.max_pool2d_indices", "F.max_pool2d({0}, {k}, {stride}, {pad}, dilation={dil}, ceil_mode={ceil}, "
       "return_indices=True)[0]", args=maxpool_args(2), input_shape=image_shape, guard=no_ties),
    Op("F.max_pool1d", "F.max_pool1d({0}, {k}, {stride}, {pad}, dilation={dil}, ceil_mode={ceil})",
       args=maxpool_args(1), input_shape=signal_shape, guard=no_ties),
    Op("F.adaptive_avg_pool2d", "F.adaptive_avg_pool2d({0}, {size})", args=need(lambda n: n in (3, 4), lambda r, s: {
        "size": r.choice([(r.randint(1, 3), None), r.randint(1, 3), (None, r.randint(1, 3))])}),
       input_shape=image_shape),
    Op("F.prelu", "F.prelu({0}, {1})", arity=2, args=lambda r, s: {"_shapes": [r.choice(
        [(1,), (s[1],) if len(s) >= 2 else (1,)])]}, partner=shapes_partner, guard=away(0.0)),
    Op("F.rrelu_eval", "F.rrelu({0}, 0.1, 0.4)", guard=away(0.0)),
    Op("F.normalize_p", "F.normalize({0}, p={p}, dim={dim})", args=lambda r, s: {
        "p": r.choice([1.0, 3.0]), "dim": a_dim(r, s)}, guard=all_of(away(0.0), nonzero_norms)),
    Op("F.softplus_beta", "F.softplus({0}, beta=2, threshold=1)", guard=away(0.5)),
    Op("F.elu_alpha", "F.elu({0}, alpha=0.5)", guard=away(0.0)),
    Op("F.hardtanh_range", "F.hardtanh({0}, -0.6, 1.4)", guard=away(-0.6, 1.4)),
    Op("F.glu_last", "F.glu({0})", args=need(lambda n: n >= 1)),
    Op("F.cross_entropy_opts", "F.cross_entropy({0}, {target}, weight={1}, ignore_index={ignore}, "
       "label_smoothing={smooth}, reduction={red})", arity=2, args=cross_entropy_args, partner=shapes_partner,
       guard=lambda v, **a: bool(np.all(_np(v[1]) > 0.05))),
    Op("F.cross_entropy_probs", "F.cross_entropy({0}, {1}.softmax(1), label_smoothing={s})", arity=2,
       args=need(lambda n: n >= 2, scalar(0.0, 0.3)), partner=same_shape),
    Op("F.nll_loss_opts", "F.nll_loss({0}, {target}, weight={1}, ignore_index={ignore}, reduction={red})", arity=2,
       args=cross_entropy_args, partner=shapes_partner, guard=lambda v, **a: bool(np.all(_np(v[1]) > 0.05))),
    Op("F.dropout_eval", "F.dropout({0}, 0.5, training=False)"),
    Op("F.dropout2d_zero", "F.dropout2d({0}, 0.0)", args=need(lambda n: n in (3, 4))),
    Op("F.one_hot_mul", "{0} * F.one_hot(torch.tensor({i}), {n}).to(torch.float64)",
       args=need(lambda n: n >= 1, lambda r, s: {"n": s[-1], "i": r.randrange(s[-1])} if s[-1] else None)),
]


# --- nn layers beyond the first ones ---------------------------------------------------------------
def sequence_shape(r):
    """(L, N, H_in), or (L, H_in) unbatched."""
    return (r.randint(1, 4),) + ((r.randint(1, 2),) if r.random() < 0.7 else ()) + (r.randint(1, 3),)


def rnn_args(r, shape):
    if len(shape) not in (2, 3) or 0 in shape:
        return None
    a = {"hin": shape[-1], "h": r.randint(1, 3), "layers": r.choice([1, 1, 2]), "bi": r.random() < 0.4,
         "bias": r.random() < 0.8, "bf": len(shape) == 3 and r.random() < 0.4}
    batch = () if len(shape) == 2 else (shape[0] if a["bf"] else shape[1],)
    a["_shapes"] = [(a["layers"] * (2 if a["bi"] else 1),) + batch + (a["h"],)]
    return a


def lstm_args(r, shape):
    a = rnn_args(r, shape)
    if a is None:
        return None
    a["proj"] = 0  # proj_size > 0: not implemented in edutorch (ValueError), so not generated
    if a["proj"]:
        a["_shapes"] = [a["_shapes"][0][:-1] + (a["proj"],), a["_shapes"][0]]
    else:
        a["_shapes"] = a["_shapes"] * 2
    return a


def cell_args(r, shape):
    if len(shape) not in (1, 2) or 0 in shape:
        return None
    h = r.randint(1, 3)
    return {"hin": shape[-1], "h": h, "bias": r.random() < 0.8, "_shapes": [shape[:-1] + (h,)] * 2}


def convt_args(r, shape):
    a = fconv_args(2, transposed=True)(r, shape)
    if a is not None:
        a.pop("_shapes")
    return a


def conv_mode_args(nd):
    def args(r, shape):
        a = conv_args(nd)(r, shape)
        if a is None:
            return None
        a["mode"] = r.choice(["zeros", "reflect", "replicate", "circular"])
        a["pad"] = r.choice([1, "same"] if a["mode"] != "reflect" or min(shape[-nd:]) > 1 else ["valid"])
        if a["pad"] == "same":
            a["stride"] = 1
        return a
    return args


RNN_CALLS = {"output": "{m}({0})[0]", "h_n": "{m}({0})[1]", "with_h0": "{m}({0}, {1})[0]"}
LSTM_CALLS = {"output": "{m}({0})[0]", "h_n": "{m}({0})[1][0]", "c_n": "{m}({0})[1][1]",
              "with_state": "{m}({0}, ({1}, {2}))[0]", "state_c": "{m}({0}, ({1}, {2}))[1][1]"}
RNN_CTOR = "{h}, num_layers={layers}, bias={bias}, batch_first={bf}, bidirectional={bi}"


def _recurrent(kind_name, calls, args):
    ops = []
    for call_name, call in calls.items():
        extra = ", proj_size={proj}" if kind_name == "LSTM" else ""
        arity = 1 + call.count("{1}") + call.count("{2}")
        nonlinearity = ", nonlinearity='tanh'" if kind_name == "RNN" else ""
        ops.append(Op(f"nn.{kind_name}.{call_name}", f"torch.nn.{kind_name}({{hin}}, {RNN_CTOR}{extra}{nonlinearity}, {F64})",
                      kind="layer", arity=arity, args=args, partner=shapes_partner, input_shape=sequence_shape,
                      call=call))
    return ops


CELLS = [
    Op("nn.RNNCell", f"torch.nn.RNNCell({{hin}}, {{h}}, bias={{bias}}, {F64})", kind="layer", args=cell_args),
    Op("nn.RNNCell.hx", f"torch.nn.RNNCell({{hin}}, {{h}}, {{bias}}, 'tanh', {F64})", kind="layer", arity=2,
       args=cell_args, partner=shapes_partner, call="{m}({0}, {1})"),
    Op("nn.GRUCell", f"torch.nn.GRUCell({{hin}}, {{h}}, bias={{bias}}, {F64})", kind="layer", args=cell_args),
    Op("nn.GRUCell.hx", f"torch.nn.GRUCell({{hin}}, {{h}}, {{bias}}, {F64})", kind="layer", arity=2, args=cell_args,
       partner=shapes_partner, call="{m}({0}, {1})"),
    Op("nn.LSTMCell.h", f"torch.nn.LSTMCell({{hin}}, {{h}}, bias={{bias}}, {F64})", kind="layer", args=cell_args,
       call="{m}({0})[0]"),
    Op("nn.LSTMCell.c", f"torch.nn.LSTMCell({{hin}}, {{h}}, {{bias}}, {F64})", kind="layer", arity=3,
       args=cell_args, partner=shapes_partner, call="{m}({0}, ({1}, {2}))[1]"),
]

RECURRENT = (_recurrent("RNN", RNN_CALLS, rnn_args) + _recurrent("GRU", RNN_CALLS, rnn_args)
             + _recurrent("LSTM", LSTM_CALLS, lstm_args) + CELLS)

LAYERS_MORE = [
    Op("nn.ConvTranspose2d", f"torch.nn.ConvTranspose2d({{cin}}, {{cout}}, {{k}}, stride={{stride}}, "
       f"padding={{pad}}, output_padding={{opad}}, groups={{groups}}, bias={{bias}}, dilation={{dil}}, {F64})",
       input_shape=image_shape, kind="layer", args=convt_args),
    Op("nn.Conv1d.padding_mode", f"torch.nn.Conv1d({{cin}}, {{cout}}, {{k}}, stride={{stride}}, padding={{pad}}, "
       f"dilation={{dil}}, groups={{groups}}, bias={{bias}}, padding_mode={{mode}}, {F64})",
       input_shape=signal_shape, kind="layer", args=conv_mode_args(1)),
    Op("nn.Conv2d.padding_mode", f"torch.nn.Conv2d({{cin}}, {{cout}}, {{k}}, stride={{stride}}, padding={{pad}}, "
       f"dilation={{dil}}, groups={{groups}}, bias={{bias}}, padding_mode={{mode}}, {F64})",
       input_shape=image_shape, kind="layer", args=conv_mode_args(2)),
    Op("nn.Embedding", f"torch.nn.Embedding({{v}}, {{d}}, padding_idx={{pidx}}, max_norm={{max_norm}}, {F64})",
       kind="layer", call="{m}({index}) * {0}.sum()", args=lambda r, s: {
           "v": (v := r.randint(1, 4)), "d": r.randint(1, 3), "pidx": r.choice([None, 0]),
           "max_norm": r.choice([None, 1.0, 0.5]),
           "index": Code(f"torch.tensor({[r.randrange(v) for _ in range(r.randint(1, 4))]})")}),
    Op("nn.Bilinear", f"torch.nn.Bilinear({{in1}}, {{in2}}, {{out}}, bias={{bias}}, {F64})", kind="layer", arity=2,
       call="{m}({0}, {1})", args=need(lambda n: n >= 1, lambda r, s: {
           "in1": s[-1], "in2": (k := r.randint(1, 3)), "out": r.randint(1, 3), "bias": r.random() < 0.7,
           "_shapes": [s[:-1] + (k,)]}), partner=shapes_partner),
    Op("nn.Upsample", "torch.nn.Upsample(size={size}, scale_factor={scale}, mode={mode}, align_corners={align})",
       kind="layer", args=interpolate_args, input_shape=image_shape),
    Op("nn.MaxPool2d.options", "torch.nn.MaxPool2d({k}, {stride}, {pad}, dilation={dil}, ceil_mode={ceil})",
       input_shape=image_shape, kind="layer", args=maxpool_args(2), guard=no_ties),
    Op("nn.AvgPool2d.options", "torch.nn.AvgPool2d({k}, {stride}, {pad}, ceil_mode={ceil}, "
       "count_include_pad={include}, divisor_override={divisor})",
       input_shape=image_shape, kind="layer", args=pool2d_args),
    Op("nn.ReflectionPad1d", "torch.nn.ReflectionPad1d({p})", kind="layer", args=need(
        lambda n: n in (2, 3), lambda r, s: {"p": (r.randint(0, s[-1] - 1), r.randint(0, s[-1] - 1))} if s[-1] else None)),
    Op("nn.ReflectionPad2d", "torch.nn.ReflectionPad2d({p})", kind="layer", input_shape=image_shape, args=need(
        lambda n: n in (3, 4), lambda r, s: {"p": r.randint(0, min(s[-2:]) - 1)} if min(s[-2:]) else None)),
    Op("nn.ReplicationPad2d", "torch.nn.ReplicationPad2d({p})", kind="layer", input_shape=image_shape,
       args=need(lambda n: n in (3, 4), lambda r, s: {"p": (1, 0, 2, 1)} if 0 not in s else None)),
    Op("nn.ReplicationPad1d", "torch.nn.ReplicationPad1d(2)", kind="layer", args=need(lambda n: n in (2, 3))),
    Op("nn.CircularPad2d", "torch.nn.CircularPad2d({p})", kind="layer", input_shape=image_shape, args=need(
        lambda n: n in (3, 4), lambda r, s: {"p": r.randint(0, min(s[-2:]))} if min(s[-2:]) else None)),
    Op("nn.ZeroPad2d", "torch.nn.ZeroPad2d((1, 0, -1, 2))", kind="layer", args=need(lambda n: n in (3, 4)),
       input_shape=image_shape),
    Op("nn.ConstantPad1d", "torch.nn.ConstantPad1d(2, 0.5)", kind="layer", args=need(lambda n: n in (2, 3))),
    Op("nn.PixelShuffle", "torch.nn.PixelShuffle(2)", kind="layer", args=need(lambda n: n >= 3),
       input_shape=lambda r: (r.choice([1, 2]), 4, r.randint(1, 3), r.randint(1, 3))),
    Op("nn.PixelUnshuffle", "torch.nn.PixelUnshuffle(2)", kind="layer", args=need(lambda n: n >= 3),
       input_shape=lambda r: (r.choice([1, 2]), r.choice([1, 2]), 2, r.choice([2, 4]))),
    Op("nn.Unfold", "torch.nn.Unfold(2, padding=1, stride=2)", kind="layer", args=need(lambda n: n in (3, 4)),
       input_shape=image_shape),
    Op("nn.Fold", "torch.nn.Fold({size}, {k})", kind="layer", args=fold_args),
    Op("nn.Unflatten", "torch.nn.Unflatten(-1, (1, -1))", kind="layer", args=need(lambda n: n >= 1)),
    Op("nn.Softmin", "torch.nn.Softmin({dim})", kind="layer", args=dim_args),
    Op("nn.GLU", "torch.nn.GLU({dim})", kind="layer", args=dim_args),
    Op("nn.RReLU.eval", "torch.nn.RReLU(0.1, 0.3).eval()", kind="layer", guard=away(0.0)),
    Op("nn.CosineSimilarity", "torch.nn.CosineSimilarity({dim})", kind="layer", arity=2, partner=same_shape,
       call="{m}({0}, {1})", args=need(lambda n: n >= 1, dim_args), guard=nonzero_norms),
    Op("nn.PairwiseDistance", "torch.nn.PairwiseDistance(keepdim=True)", kind="layer", arity=2, partner=same_shape,
       call="{m}({0}, {1})", guard=apart),
    Op("nn.PReLU.channels", f"torch.nn.PReLU({{c}}, {F64})", kind="layer", args=channels, guard=away(0.0)),
    Op("nn.CrossEntropyLoss", "torch.nn.CrossEntropyLoss(label_smoothing=0.1)", kind="layer",
       call="{m}({0}, {target})", args=cross_entropy_args),
    Op("nn.NLLLoss", "torch.nn.NLLLoss(reduction='sum')", kind="layer", call="{m}({0}, {target})",
       args=cross_entropy_args),
]

FAMILIES.update({
    "unary2": (1.5, UNARY_MORE), "binary2": (1.2, BINARY_MORE), "inplace2": (1.5, INPLACE_MORE),
    "reduction2": (1.0, REDUCTIONS_MORE), "linalg": (1.2, LINALG), "shape2": (1.8, SHAPE_MORE),
    "functional": (2.0, FUNCTIONAL), "recurrent": (0.8, RECURRENT), "layer2": (1.2, LAYERS_MORE),
})
OPS.update({op.name: op for _, ops in FAMILIES.values() for op in ops})
assert len(OPS) == sum(len(ops) for _, ops in FAMILIES.values()) + len(FORWARD), "op names must be unique"
