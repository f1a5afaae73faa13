"""Random programs run in lock-step on edutorch and real PyTorch.

A *program* is a list of steps, each one or a few lines of Python written
against the names ``torch`` and ``F`` (``torch.nn.functional``).  The same text
is executed twice: once with ``torch`` bound to real PyTorch (the reference)
and once with ``torch`` bound to edutorch.  So the printed program is exactly
what ran, and a failure can be pasted into either library.

    generate(seed)          a random program (ops from ``fuzz_ops.OPS``)
    execute(program, lib)   run it: an ``Outcome`` (error, or values and grads)
    differences(ref, got)   what edutorch got wrong, as readable lines
    shrink(program, ...)    remove steps while the disagreement stays
    source(program)         the program as Python

Generation runs each candidate step on real PyTorch right away, so it knows
every value's shape and can refuse steps whose answer depends on the hardware
(ties in max/sort, inputs on a kink of relu/clamp, values outside an op's
domain, NaN/inf results): the ``guard`` of an op spec.
"""
from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

import fuzz_ops
from fuzz_ops import OPS

# index_select out of range: IndexError from one CPU kernel, RuntimeError with this message from another
# (chosen by dim and layout), so only "both refused at this line" is compared
KERNEL_PATH_ERRORS = ("INDICES element is out of DATA bounds",)
# PyTorch's own limits at backward, not semantics: no double backward for some ops; scatter with a
# src larger than its index (ScatterBackward0 returns a gradient of the index's shape and its engine refuses it)
PYTORCH_GAPS = ("is not implemented", "returned an invalid gradient")
# PyTorch's own assertion failing ("please report a bug to PyTorch"): `v.retain_grad(); v.detach_(); v.div_(w)`
# (seed 285000004334) fails "old_fn INTERNAL ASSERT" in variable.cpp; there is no behaviour to compare
PYTORCH_BUG = "INTERNAL ASSERT FAILED"
RTOL = 1e-7
ATOL = 1e-9
# PyTorch's CPU kernels for these use the float32 constant 1/6 even in float64 (their gradients
# are off by ~3e-8 relative): programs with them are compared at a looser tolerance
LOOSE_RTOL = 1e-5
LOOSE_OPS = {"hardsigmoid", "hardswish", "nn.Hardsigmoid", "nn.Hardswish", "F.hardsigmoid_inplace",
             "F.hardswish_inplace",
             # celu: gradients differ by ~1e-7 relative after cancellation (cause not investigated)
             "celu", "nn.CELU", "F.celu_"}


# --- programs ------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One statement (or a few lines) of a program, and what it reads and defines."""

    op: str  # the op spec's name (fuzz_ops.OPS), or "leaf"
    code: str  # Python source, run with torch = the library under test
    inputs: tuple = ()  # names read
    outputs: tuple = ()  # names defined (new tensors; m<k> for a module)
    target: str | None = None  # for an in-place step: the name written to
    shapes: tuple = ()  # the inputs' shapes when generated (for fuzz_known)
    grads: tuple = ()  # the inputs' requires_grad when generated
    args: tuple = ()  # the op's arguments as (key, value) pairs (for its guard)
    leaves: tuple = ()  # leaf tensors this step adds that require grad (x<k>, m<k>.weight, ...)


@dataclass(frozen=True)
class Program:
    steps: tuple
    loss: tuple = ()  # (name, c): loss = sum over terms of (v * (v + c)).sum()
    double: bool = False  # backward of loss + |grad|^2 through create_graph=True
    forward: bool = False  # forward-mode AD: runs inside a dual level, leaves are dual, no loss

    def names(self):
        """The tensors it defines, in order (module names m<k> left out)."""
        return [n for s in self.steps for n in s.outputs if not _is_module(n)]

    def leaves(self):
        return [p for s in self.steps for p in s.leaves]

    def modules(self):
        return [n for s in self.steps for n in s.outputs if _is_module(n)]


def _is_module(name):
    return name[0] == "m" and name[1:].isdigit()


def loss_lines(program):
    """The lines after the steps: a scalar loss and its backward."""
    defined = set(program.names())
    terms = [f"({n} * ({n} + {c!r})).sum()" for n, c in program.loss if n in defined]
    if not terms:
        return []
    lines = ["loss = " + " + ".join(terms)]
    if program.double:
        leaves = ", ".join(program.leaves())
        lines += [
            f"grads = torch.autograd.grad(loss, [{leaves}], create_graph=True, allow_unused=True)",
            "(loss + sum((g * g).sum() for g in grads if g is not None)).backward()",
        ]
    else:
        lines.append("loss.backward()")
    return lines


def source(program, lib="torch"):
    """The program as Python to paste into a file (``lib``: torch or edutorch)."""
    head = "import torch" if lib == "torch" else "import edutorch as torch"
    lines = [head, "F = torch.nn.functional"]
    if program.forward:
        lines += FORWARD_HEADER
    lines += [s.code for s in program.steps]
    lines += loss_lines(program)
    return "\n".join(lines)


# --- running a program ---------------------------------------------------------
class Invalid(Exception):
    """The reference run hit a hardware-dependent corner: the program is not compared."""


@dataclass
class Outcome:
    error: tuple | None = None  # (where: the line or "backward", builtin exception type name, message)
    forward: list = field(default_factory=list)  # per step: [(name, summary), ...]
    final: dict = field(default_factory=dict)  # name -> summary after backward


_COMPILED = {}


def _compiled(code):
    if code not in _COMPILED:
        _COMPILED[code] = compile(code, "<fuzz step>", "exec")
    return _COMPILED[code]


def builtin_type(err):
    """The first built-in exception class of ``err`` (torch._C._LinAlgError -> RuntimeError)."""
    for cls in type(err).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(err).__name__


def summary(t, ns):
    """What is compared of one tensor: shape, dtype, values, requires_grad, is_leaf, tangent
    (forward mode; else None), grad."""
    grad = t.grad
    tangent = tangent_of(t, ns)
    return (
        tuple(t.shape),
        str(t.dtype),
        np.array(t.detach().numpy(), copy=True),
        bool(t.requires_grad),
        bool(t.is_leaf),
        None if tangent is None else _array(tangent),
        None if grad is None else _array(grad),
    )


def _array(t):
    """A copy of ``t``'s values; PyTorch's ``ZeroTensor`` (a gradient some ops give, ``sgn``) has none."""
    if getattr(t, "_is_zerotensor", lambda: False)():
        return np.zeros(tuple(t.shape))
    return np.array(t.detach().numpy(), copy=True)


def namespace(lib, forward=False):
    return {"torch": lib, "F": lib.nn.functional, "fwAD": lib.autograd.forward_ad, FORWARD: forward}


# --- forward mode ------------------------------------------------------------------
# A forward-mode program runs inside one dual level (its first lines), its leaves made dual with
# seeded tangents; every value's primal and tangent (``unpack_dual``) are compared, and no loss.
FORWARD = "__forward__"  # the namespace's flag: a forward-mode program
FORWARD_HEADER = ["fwAD = torch.autograd.forward_ad", "fwAD.enter_dual_level()"]


def tangent_of(t, ns):
    """The tangent of ``t`` at the open dual level (forward mode), else None."""
    return ns["fwAD"].unpack_dual(t).tangent if ns[FORWARD] else None


class dual_level_of:
    """``with dual_level_of(ns):`` a dual level of ``ns``'s library open for a forward-mode program."""

    def __init__(self, ns):
        self.fw = ns["fwAD"] if ns[FORWARD] else None

    def __enter__(self):
        if self.fw is not None:
            self.fw.enter_dual_level()

    def __exit__(self, *exc_info):
        if self.fw is not None:
            self.fw.exit_dual_level()


def _dense(t):
    """PyTorch's ``is_non_overlapping_and_dense``: the dims of size > 1, ordered by stride, are contiguous."""
    expected = 1
    for stride, size in sorted((st, n) for n, st in zip(t.shape, t.stride()) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def left_to_memory_order(step, ns):
    """Does the in-place ``step`` write memory that another of its inputs reads, where PyTorch's overlap
    check gives up (an operand that is not dense: ``MemOverlapStatus::TooHard``) and runs, its result left
    to the order its kernel visits memory?  edutorch refuses those (``views.check_no_overlap``)."""
    if step.target is None:
        return False
    target = ns[step.target]
    for name in step.inputs:
        other = ns[name]
        if name == step.target or not hasattr(other, "untyped_storage") or other.numel() == 0:
            continue
        shared = np.shares_memory(target.detach().numpy(), other.detach().numpy())
        if shared and not (_dense(target) and _dense(other)):
            return True
    return False


def reads_what_it_writes(step, ns):
    """Forward mode: does the in-place ``step`` read, as another operand or its tangent, memory it
    writes (``x.mul_(x)``, ``x.addcmul_(x, y)``, ``x.mul_(x[:1])``, ``t += x`` with ``t`` the tangent
    of ``x``)?  PyTorch's tangent formula then reads that operand's new value (``x.mul_(x)`` at x = 2
    with tangent 1 gives the tangent 6, not 4): a PyTorch bug, edutorch gives the derivative; not
    compared."""
    if step.target is None:
        return False
    target = ns[step.target].detach().numpy()
    for name in step.inputs[1:]:  # (the first is the target)
        other = ns[name]
        if not hasattr(other, "untyped_storage"):
            continue
        tangent = tangent_of(other, ns)
        if any(np.shares_memory(target, t.detach().numpy()) for t in (other, tangent) if t is not None):
            return True
    return False


IN_PLACE_VIEW_OPS = ("unsqueeze_", "squeeze_", "t_")


def tangent_of_another_shape(ns):
    """Forward mode: has a tensor a tangent of another shape than its own?  PyTorch's ``x[...]``
    (``alias``) shares its input's tangent tensor, so ``x[...].unsqueeze_(0)`` gives the 0-d ``x`` a
    tangent of shape (1,) (seed 5750001215): a PyTorch bug; edutorch's ``x[...]`` has a view of it."""
    for value in ns.values():
        if isinstance(value, ns["torch"].Tensor) and value.is_floating_point():
            try:
                tangent = tangent_of(value, ns)
            except RuntimeError:  # (a view PyTorch refuses to read now: a split output whose base changed)
                continue
            if tangent is not None and tangent.shape != value.shape:
                return True
    return False


def writes_overlapping_memory(step, ns):
    """Does the in-place ``step`` write a tensor whose elements share memory (``x.unfold(0, 2, 1)``)?
    Where PyTorch's op does not refuse it (``F.elu_``; ``add_`` does), the result is left to memory
    order, and edutorch refuses: not compared (seed 1750000411)."""
    target = ns.get(step.target) if step.target else None
    if not hasattr(target, "untyped_storage"):
        return False
    a = target.detach().numpy()
    addresses = sum(index * stride for index, stride in zip(np.indices(a.shape), a.strides))
    return np.unique(addresses).size < a.size


def run_step(step, ns, check):
    """Run one step in ``ns``; with ``check`` (the reference run) refuse unfair corners."""
    if check and not guard_passes(step.op, [ns[n] for n in step.inputs], dict(step.args)):
        raise Invalid(f"guard of {step.op}")
    if check and left_to_memory_order(step, ns):
        raise Invalid(f"{step.op}: an overlapping write PyTorch leaves to memory order")
    if check and ns[FORWARD] and reads_what_it_writes(step, ns):
        raise Invalid(f"{step.op}: PyTorch's tangent formula reads an operand after the write")
    overlapping = check and writes_overlapping_memory(step, ns)
    exec(_compiled(step.code), ns)
    if overlapping:  # (PyTorch ran)
        raise Invalid(f"{step.op}: an overlapping write PyTorch does not refuse")
    if check and ns[FORWARD] and step.op in IN_PLACE_VIEW_OPS and tangent_of_another_shape(ns):
        raise Invalid(f"{step.op}: PyTorch changed the shape of a tangent another tensor shares")
    if check:
        for name in step.outputs + ((step.target,) if step.target else ()):
            value = ns[name]
            if hasattr(value, "detach") and value.is_floating_point():
                tangent = tangent_of(value, ns)
                for a in (value.detach().numpy(), None if tangent is None else _array(tangent)):
                    if a is not None and (not np.all(np.isfinite(a)) or (a.size and np.abs(a).max() > 1e4)):
                        raise Invalid(f"non-finite or huge result of {step.op}")


def guard_passes(op, values, args):
    """The op's guard on PyTorch values; a guard that cannot judge (bad shapes) lets the op decide."""
    guard = OPS[op].guard if op in OPS else None
    if guard is None:
        return True
    try:
        return bool(guard(values, **args))
    except Exception:  # noqa: BLE001 - the op itself raises (and both libraries must agree)
        return True


def execute(program, lib, check=False):
    """Run ``program`` with ``torch`` = ``lib``; an ``Outcome``. ``check``: raise Invalid on corners."""
    ns = namespace(lib, program.forward)
    out = Outcome()
    with warnings.catch_warnings(), dual_level_of(ns):
        warnings.simplefilter("ignore")
        for i, step in enumerate(program.steps):
            try:
                run_step(step, ns, check)
                out.forward.append([(n, summary(ns[n], ns)) for n in step.outputs
                                    if not _is_module(n) and hasattr(ns[n], "detach")])
                if step.target:
                    out.forward[-1].append((step.target, summary(ns[step.target], ns)))
            except Invalid:
                raise
            except Exception as err:  # noqa: BLE001 - any error is compared by type
                if check and PYTORCH_BUG in str(err):
                    raise Invalid("a PyTorch bug") from err
                out.error = (f"`{step.code.splitlines()[-1]}`", builtin_type(err), str(err).split("\n")[0][:200])
                return out
        try:
            exec(_compiled("\n".join(loss_lines(program))), ns)
        except Exception as err:  # noqa: BLE001
            if check and any(gap in str(err) for gap in PYTORCH_GAPS):
                raise Invalid("PyTorch cannot differentiate this") from err  # a PyTorch gap, not semantics
            out.error = ("backward", builtin_type(err), str(err).split("\n")[0][:200])
            return out
        for name in program.names() + _module_tensors(program, ns):
            if not hasattr(ns.get(name, ns), "detach") and "." not in name:
                continue
            try:
                out.final[name] = summary(eval(name, ns), ns)
            except Exception as err:  # noqa: BLE001
                out.final[name] = f"{builtin_type(err)}: {err}"
    return out


def _module_tensors(program, ns):
    names = []
    for m in program.modules():
        module = ns[m]
        names += [f"{m}.{n}" for n, _ in module.named_parameters()]
        names += [f"{m}.{n}" for n, b in module.named_buffers() if b is not None and b.is_floating_point()]
    return names


# --- comparing -------------------------------------------------------------------
_FIELDS = ("shape", "dtype", "values", "requires_grad", "is_leaf", "tangent", "grad")


def _close(a, b, rtol):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape:
        return False
    scale = max(1.0, float(np.abs(a).max())) if a.size and np.all(np.isfinite(a)) else 1.0
    return bool(np.allclose(b, a, rtol=rtol, atol=ATOL * scale * rtol / RTOL, equal_nan=True))


def _diff_summary(name, ref, got, rtol):
    if isinstance(ref, str) or isinstance(got, str):
        return [] if ref == got else [f"{name}: torch {ref!r}, edutorch {got!r}"]
    lines = []
    for field_name, a, b in zip(_FIELDS, ref, got):
        same = _close(a, b, rtol) if field_name in ("values", "tangent", "grad") else a == b
        if not same:
            lines.append(f"{name}.{field_name}: torch {_show(a)}, edutorch {_show(b)}")
    return lines


def _show(a):
    if isinstance(a, np.ndarray):
        return np.array2string(a, precision=6, threshold=12)
    return repr(a)


def differences(ref, got, program=None):
    """Readable lines saying where ``got`` (edutorch) differs from ``ref`` (PyTorch); [] if none."""
    loose = program is not None and any(s.op in LOOSE_OPS for s in program.steps)
    rtol = LOOSE_RTOL if loose else RTOL
    if ref.error or got.error:
        if ref.error and got.error and ref.error[:2] == got.error[:2]:
            return []
        if ref.error and got.error and ref.error[0] == got.error[0] and ref.error[2].startswith(KERNEL_PATH_ERRORS):
            return []  # PyTorch's type depends on which kernel ran: any refusal at that line agrees
        return [f"torch: {_error(ref)}", f"edutorch: {_error(got)}"]
    for step_ref, step_got in zip(ref.forward, got.forward):
        for (name, a), (_, b) in zip(step_ref, step_got):
            lines = _diff_summary(name, a[:6], b[:6], rtol)  # grads only at the end
            if lines:
                return ["forward " + line for line in lines]
    lines = []
    for name, a in ref.final.items():
        lines += _diff_summary(name, a, got.final.get(name, "missing"), rtol)
    return lines


def _error(outcome):
    if outcome.error is None:
        return "ran without error"
    where, kind, msg = outcome.error
    return f"{kind} at {where}: {msg}"


def kind_of(diff):
    """A coarse class of a disagreement, kept while shrinking: who raised what, or which field differs."""
    if diff[0].startswith("torch:"):  # "torch: RuntimeError at ...", "edutorch: ran without error"
        return "error:" + "|".join(line.split(": ", 1)[1].split(" ", 1)[0] for line in diff[:2])
    if diff[0].startswith("forward"):
        return "forward"
    return "final:" + diff[0].split(":")[0].rsplit(".", 1)[-1]


# --- generating ------------------------------------------------------------------
def leaf_code(name, shape, requires_grad, r, dual=False):
    """``x3 = torch.tensor([...], dtype=torch.float64, requires_grad=True)`` with distinct values.

    Values are distinct multiples of 0.01 in [-2.5, 2.5] that avoid multiples of
    0.25 (0, ±0.5, ±1, ...: the kinks of relu, hardtanh, shrink functions).
    ``dual`` (forward mode): ``x3 = fwAD.make_dual(torch.tensor(...), torch.tensor(...))``, a tangent of
    seeded values (multiples of 0.01 in [-2, 2]).
    """
    if dual:
        n = int(np.prod(shape, dtype=np.int64))
        tangent = (np.array([r.randint(-200, 200) for _ in range(n)], dtype=np.float64) / 100).reshape(shape)
        primal = leaf_code(name, shape, requires_grad, r).split(" = ", 1)[1]
        return f"{name} = fwAD.make_dual({primal}, {_tensor_source(tangent)})"
    n = int(np.prod(shape, dtype=np.int64))
    rg = ", requires_grad=True" if requires_grad else ""
    if n == 0:
        return f"{name} = torch.zeros({tuple(shape)!r}, dtype=torch.float64{rg})"
    scale = 100 if n <= 400 else 1000  # a big operand (of a repeat's result): three decimals
    pool = [k for k in range(-250 * scale // 100, 250 * scale // 100 + 1) if k % (scale // 4)]
    if n > len(pool):
        raise Invalid(f"a leaf of {n} elements")
    values = (np.array(r.sample(pool, n), dtype=np.float64) / scale).reshape(shape)
    return f"{name} = {_tensor_source(values, rg)}"


def _tensor_source(values, rest=""):
    if values.size == 0:
        return f"torch.zeros({values.shape!r}, dtype=torch.float64{rest})"
    return f"torch.tensor({values.tolist()!r}, dtype=torch.float64{rest})"


def random_shape(r):
    """0-d sometimes, size-0 dims sometimes, at most 4 dims of size 1..4, at most 48 elements."""
    ndim = r.choices([0, 1, 2, 3, 4], weights=[1, 3, 4, 3, 1])[0]
    shape = [r.choice([1, 2, 3, 3, 4]) for _ in range(ndim)]
    if shape and r.random() < 0.05:
        shape[r.randrange(ndim)] = 0
    while int(np.prod(shape)) > 48:
        shape[r.randrange(ndim)] = 1
    return tuple(shape)


class Generator:
    """Builds a program step by step, running each step on PyTorch as it goes."""

    def __init__(self, seed, torch, n_steps=None, double=False, forward=False):
        self.r = random.Random(seed)
        self.torch = torch
        self.steps = []
        self.forward = forward
        self.ns = namespace(torch, forward)
        self.count = 0
        self.n_steps = n_steps or self.r.randint(2, 9)
        self.double = double
        self.ended_in_error = False

    # names -----------------------------------------------------------------------
    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def tensors(self):
        """Names of the float tensors defined so far."""
        return [n for s in self.steps for n in s.outputs
                if not _is_module(n) and self.ns[n].is_floating_point()]

    def shape(self, name):
        return tuple(self.ns[name].shape)

    # steps -----------------------------------------------------------------------
    def add_leaf(self, shape, requires_grad=None):
        name = self.fresh("x")
        if requires_grad is None:
            # forward mode: most leaves dual, a few also requiring grad (a dual is then a view of one)
            requires_grad = self.r.random() < (0.2 if self.forward else 0.7)
        dual = self.forward and self.r.random() < 0.75
        step = Step("leaf", leaf_code(name, shape, requires_grad, self.r, dual), outputs=(name,),
                    leaves=(name,) if requires_grad and not dual else ())
        run_step(step, self.ns, check=True)
        self.steps.append(step)
        return name

    def replay(self):
        """Run the accepted steps again from the start (after a refused step changed state)."""
        self.ns = namespace(self.torch, self.forward)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for step in self.steps:
                run_step(step, self.ns, check=True)

    def pick_input(self):
        names = self.tensors()
        # prefer recent values: chains of ops, views of views, in-place on results
        return names[-1] if self.r.random() < 0.4 else self.r.choice(names)

    def pick_first(self, spec):
        """The first input and the op's arguments: a few tries for one the op applies to (and, for a
        one-input op, that its guard accepts); layers sometimes get a new leaf of a shape they take."""
        for _ in range(3):
            if spec.input_shape is not None and self.r.random() < 0.3:
                first = self.add_leaf(spec.input_shape(self.r))
            else:
                first = self.pick_input()
            args = spec.args(self.r, self.shape(first)) if spec.args else {}
            if args is not None and (spec.arity > 1 or guard_passes(spec.name, [self.ns[first]], args)):
                return first, args
        return None, None

    def operand(self, spec, shape0, args):
        """A further operand for ``spec``: an existing tensor of a fitting shape, or a new leaf."""
        if self.r.random() < 0.03:
            want = random_shape(self.r)  # any shape: both libraries must refuse alike
        else:
            want = spec.partner(self.r, shape0, args)
            if want is None:
                return None
        same = [n for n in self.tensors() if self.shape(n) == tuple(want)]
        if same and self.r.random() < 0.6:
            return self.r.choice(same)
        return self.add_leaf(tuple(want))

    def try_step(self, spec):
        """Add one step of ``spec`` if PyTorch gives a fair answer for it; False if refused."""
        first, args = self.pick_first(spec)
        if first is None:
            return False
        shape0 = self.shape(first)
        names = [first]
        for _ in range(spec.arity - 1):
            name = self.operand(spec, shape0, args)
            if name is None:
                return False
            names.append(name)
        step = spec.build(self, names, args)
        if step is None:
            return False
        if not guard_passes(spec.name, [self.ns[n] for n in names], args):
            return False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                run_step(step, self.ns, check=True)
            except Invalid:
                self.replay()
                return False
            except Exception:  # noqa: BLE001 - PyTorch refuses: sometimes keep it as the last step
                if self.r.random() < 0.25:
                    self.steps.append(step)
                    self.ended_in_error = True
                    return True
                self.replay()
                return False
        self.steps.append(step)
        return True

    def program(self):
        with dual_level_of(self.ns):
            return self._program()

    def _program(self):
        for _ in range(self.r.randint(1, 3)):
            self.add_leaf(random_shape(self.r))
        while len(self.steps) < self.n_steps + 3 and not self.ended_in_error:
            after_layer = self.steps[-1].op.startswith("nn.") and self.r.random() < 0.3
            for _attempt in range(30):
                # a layer is followed by an in-place op (on its output, most often) now and then
                spec = self.r.choice(fuzz_ops.INPLACE) if after_layer and _attempt < 3 else fuzz_ops.choose(self.r, self.forward)
                if self.try_step(spec):
                    break
            else:
                break
        return Program(tuple(self.steps), self.loss_terms(), self.double, self.forward)

    def loss_terms(self):
        if self.ended_in_error or self.forward:
            return ()
        terms = []
        names = self.tensors()
        for name in names:
            if (name == names[-1] or self.r.random() < 0.5) and self.ns[name].requires_grad:
                terms.append((name, self.r.choice([0.5, -1.25, 2.0, 0.75])))
        return tuple(terms)


def generate(seed, torch, double=False, forward=False):
    """A random program from ``seed`` (the same seed always gives the same program)."""
    return Generator(seed, torch, double=double, forward=forward).program()


# --- shrinking ---------------------------------------------------------------------
def without(program, index):
    """``program`` without step ``index`` and every later step that reads what it defined."""
    gone = set(program.steps[index].outputs)
    kept = []
    for i, step in enumerate(program.steps):
        if i == index:
            continue
        reads = set(step.inputs) | ({step.target} if step.target else set())
        if reads & gone:
            gone |= set(step.outputs)
            continue
        kept.append(step)
    loss = tuple((n, c) for n, c in program.loss if n not in gone)
    return replace(program, steps=tuple(kept), loss=loss)


def shrink(program, still_fails, budget=300):
    """Delete steps and loss terms while ``still_fails(candidate)`` holds; the smallest found."""
    changed = True
    while changed and budget > 0:
        changed = False
        for i in reversed(range(len(program.steps))):
            if i >= len(program.steps):
                continue
            candidate = without(program, i)
            budget -= 1
            if still_fails(candidate):
                program, changed = candidate, True
        for j in reversed(range(len(program.loss))):
            if j >= len(program.loss) or len(program.loss) == 1:
                continue
            candidate = replace(program, loss=program.loss[:j] + program.loss[j + 1:])
            budget -= 1
            if still_fails(candidate):
                program, changed = candidate, True
    return program


def from_source(text, forward=False):
    """A ``Program`` of plain Python lines (one step each; names assigned are compared);
    ``forward``: run in a dual level, values' tangents compared too."""
    import ast

    steps = []
    for line in text.strip().splitlines():
        outputs = ()
        node = ast.parse(line).body[0]
        if isinstance(node, ast.Assign):
            target = node.targets[0]
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            outputs = tuple(e.id for e in elts if isinstance(e, ast.Name))
        steps.append(Step("source", line, outputs=outputs))
    return Program(tuple(steps), forward=forward)
