"""ParameterTree: the module tree as PyTorch names it, with every parameter and buffer.

``ParameterTreeModel`` (no ipywidgets) walks ``module.named_modules()`` and,
for each module, its *own* parameters and buffers
(``named_parameters(recurse=False)``, ``named_buffers(recurse=False)``).
A buffer is *persistent* when it appears in ``state_dict()``; a parameter
always does. ``distributions()`` gives a histogram of every weight on one
shared range, to compare layers (how an initialisation spreads the values).
``ParameterTree`` is the view: a text tree, a dropdown of tensor names and a
picture of the chosen tensor next to its ``.grad``, or of every weight's
distribution.

Reparametrized tensors get rows of their own. A *derived* tensor is one a
module computes from stored ones instead of storing it: ``weight`` after
``parametrize.register_parametrization`` (a property, recomputed on every
read, from ``parametrizations.weight.original``) or after the hook-based
``weight_norm``, ``spectral_norm`` and pruning (a plain attribute that a
forward pre-hook recomputes before each forward, from ``weight_g``/``weight_v``
or ``weight_orig``). The stored tensors it comes from are marked *original*.
Derived tensors are in neither ``parameters()`` nor ``state_dict()``.
"""
from __future__ import annotations

import importlib
import math
import re
from dataclasses import dataclass

import numpy as np

from ._common import dtype_name, framework_of, max_abs, numpy_view, sample_of, stats_of, to_numpy

SAMPLE_SIZE = 1 << 20  # a weight's distribution histograms a seeded random sample of this many


@dataclass(frozen=True)
class TensorRow:
    """One parameter or buffer, as listed under its module."""

    name: str  # fully qualified, as in state_dict: "0.weight"
    kind: str  # "parameter" or "buffer"
    shape: tuple
    dtype: str
    device: str
    requires_grad: bool
    persistent: bool  # saved by state_dict()?
    numel: int
    has_grad: bool
    role: str = ""  # "derived" (computed, kind "derived"), "original" (stored, a derived
    #                 tensor is computed from it) or "" (neither)
    related: tuple = ()  # derived: the names it is computed from; original: the derived name
    how: str = ""  # derived: "parametrize" (a property) or "forward pre-hook"


@dataclass(frozen=True)
class ModuleRow:
    """One node of the module tree (``named_modules`` order)."""

    name: str  # "" for the root module, like named_modules()
    depth: int
    class_name: str
    training: bool
    tensors: tuple  # TensorRow for its own parameters, its own buffers, then derived tensors

    @property
    def parameter_count(self):
        """Elements in this module's OWN parameters (not its children's)."""
        return sum(t.numel for t in self.tensors if t.kind == "parameter")

    @property
    def label(self):
        """The name shown in the tree: the last part of the qualified name."""
        return self.name.rsplit(".", 1)[-1] if self.name else "(root)"


@dataclass(frozen=True)
class Distribution:
    """The histogram of one tensor's values (``counts`` over the bins between ``edges``)."""

    name: str
    shape: tuple
    counts: np.ndarray
    edges: np.ndarray  # shared by every Distribution of one ``distributions()`` call
    std: float  # of the finite values
    fan_in: int  # what nn.init calls fan_in: shape[1] * the kernel size
    sampled: int = 0  # entries counted: all of them, or SAMPLE_SIZE of a bigger weight

    @property
    def bound(self):
        """``1 / sqrt(fan_in)``: the bound of nn.Linear's and nn.Conv's default U(-bound, bound)."""
        return 1.0 / math.sqrt(self.fan_in) if self.fan_in > 0 else float("inf")


class ParameterTreeModel:
    """What ``ParameterTree`` shows, computed from the public ``nn.Module`` API."""

    def __init__(self, module):
        self.module = module
        self._stats = {}  # id(tensor) -> (tensor, its _version then, Stats): see stats()
        self.refresh()

    def refresh(self):
        """Re-read the module (after training steps, pruning, ``.eval()``, ...)."""
        persistent = set(self.module.state_dict(keep_vars=True).keys())
        self._tensors = {}  # qualified name -> live tensor (derived: its value at refresh)
        modules = list(self.module.named_modules())
        self._derived = {}  # qualified derived name -> (how, names it is computed from)
        for prefix, m in modules:
            for name, (how, sources) in derived_tensors(m).items():
                self._derived[_join(prefix, name)] = (how, tuple(_join(prefix, s) for s in sources))
        self._original_of = {source: name for name, (_, sources) in self._derived.items()
                             for source in sources}
        self._rows = tuple(self._module_row(name, m, persistent) for name, m in modules)

    def _module_row(self, prefix, module, persistent):
        rows = []
        for kind, pairs in (("parameter", module.named_parameters(recurse=False)),
                            ("buffer", module.named_buffers(recurse=False))):
            for name, t in pairs:
                full = _join(prefix, name)
                self._tensors[full] = t
                derived = self._original_of.get(full)
                rows.append(TensorRow(
                    name=full, kind=kind, shape=tuple(t.shape), dtype=dtype_name(t),
                    device=str(t.device), requires_grad=bool(t.requires_grad),
                    persistent=full in persistent, numel=int(t.numel()),
                    has_grad=kind == "parameter" and t.grad is not None,
                    role="original" if derived else "", related=(derived,) if derived else (),
                ))
        for name in derived_tensors(module):
            full = _join(prefix, name)
            how, sources = self._derived[full]
            t = derived_value(module, name)
            self._tensors[full] = t
            # computed under no_grad here: it requires grad when a tensor it comes from does
            requires_grad = any(_lookup(self.module, s).requires_grad for s in sources)
            rows.append(TensorRow(
                name=full, kind="derived", shape=tuple(t.shape), dtype=dtype_name(t),
                device=str(t.device), requires_grad=bool(requires_grad), persistent=False,
                numel=int(t.numel()), has_grad=False, role="derived",
                related=sources, how=how,
            ))
        depth = prefix.count(".") + 1 if prefix else 0
        return ModuleRow(prefix, depth, type(module).__name__, bool(module.training), tuple(rows))

    # -- what the view asks -------------------------------------------------------
    def rows(self):
        """One ``ModuleRow`` per module, in ``named_modules()`` order."""
        return list(self._rows)

    def tensor_names(self):
        """Every parameter and buffer name, grouped by module (the dropdown's options)."""
        return [t.name for row in self._rows for t in row.tensors]

    def tensor_row(self, name):
        for row in self._rows:
            for t in row.tensors:
                if t.name == name:
                    return t
        raise KeyError(
            f"no parameter or buffer named {name!r}; choose one of {self.tensor_names()}")

    def tensor(self, name):
        """The live tensor object (a Parameter or a buffer)."""
        self.tensor_row(name)  # a clear KeyError for unknown names
        return self._tensors[name]

    def derived_names(self):
        """The qualified names of the derived (computed, not stored) tensors."""
        return list(self._derived)

    def sources(self, name):
        """For a derived tensor, the qualified names of the stored tensors it is computed from."""
        row = self.tensor_row(name)
        return row.related if row.role == "derived" else ()

    def values(self, name):
        """A NumPy copy of the tensor's values."""
        return to_numpy(self.tensor(name))

    def values_view(self, name):
        """The tensor's values as NumPy without a copy (to read, never to write)."""
        return numpy_view(self.tensor(name))

    def grad(self, name):
        """A NumPy copy of ``.grad``, or ``None`` (buffers and unused parameters)."""
        grad = self._grad_tensor(name)
        return None if grad is None else to_numpy(grad)

    def grad_view(self, name):
        """``.grad`` as NumPy without a copy, or ``None``."""
        grad = self._grad_tensor(name)
        return None if grad is None else numpy_view(grad)

    def _grad_tensor(self, name):
        t = self.tensor(name)
        if self.tensor_row(name).kind != "parameter" or t.grad is None:  # derived: never a leaf
            return None
        return t.grad

    def stats(self, tensor):
        """``stats_of`` a tensor, computed once per version of it: a tensor changed in place
        (an optimizer step, ``prune``) has a new ``_version``, as in PyTorch."""
        version = getattr(tensor, "_version", None)
        known = self._stats.get(id(tensor))
        if known is None or known[0] is not tensor or known[1] != version or version is None:
            known = (tensor, version, stats_of(numpy_view(tensor)))
            self._stats[id(tensor)] = known
        return known[2]

    def totals(self):
        """Element counts: parameters (trainable / frozen) and buffers, each tensor once."""
        trainable = frozen = 0
        for p in self.module.parameters():  # parameters() lists a shared one once
            if p.requires_grad:
                trainable += int(p.numel())
            else:
                frozen += int(p.numel())
        buffers = sum(int(b.numel()) for b in self.module.buffers())
        return {"parameters": trainable + frozen, "trainable": trainable, "frozen": frozen,
                "buffers": buffers}

    def tensor_summary(self, name):
        """Shape, dtype, statistics of the values and (when present) of ``.grad``."""
        row = self.tensor_row(name)
        grad = self._grad_tensor(name)
        return {
            "name": name, "kind": row.kind, "shape": row.shape, "dtype": row.dtype,
            "device": row.device, "requires_grad": row.requires_grad,
            "persistent": row.persistent, "numel": row.numel,
            "stats": self.stats(self.tensor(name)),
            "grad_stats": None if grad is None else self.stats(grad),
        }

    def weight_names(self):
        """Every parameter with two or more dimensions: the weights, whose spread an
        initialisation (``nn.init``) chooses (what ``distributions()`` draws by default)."""
        return [t.name for row in self._rows for t in row.tensors
                if t.kind == "parameter" and len(t.shape) >= 2]

    def distributions(self, names=None, bins=41):
        """A ``Distribution`` per tensor, all on ONE symmetric range ``[-R, R]`` (``R`` the largest
        finite |value| among them), so layers compare at a glance.

        ``names`` defaults to every parameter with two or more dimensions: the weights, whose
        spread an initialisation (``nn.init``) chooses. A weight of more than ``SAMPLE_SIZE``
        entries is histogrammed on a seeded random sample of that many (``Distribution.sampled``);
        ``R`` and the std use every entry.
        """
        names = self.weight_names() if names is None else names
        arrays = {name: self.values_view(name) for name in names}
        reach = max((max_abs(a) for a in arrays.values()), default=0.0) or 1.0
        edges = np.linspace(-reach, reach, bins + 1)
        result = []
        for name, a in arrays.items():
            shape = self.tensor_row(name).shape
            sample = sample_of(a, SAMPLE_SIZE).astype(np.float64)
            counts, _ = np.histogram(sample[np.isfinite(sample)], bins=edges)  # inf/nan: off axis
            fan_in = int(np.prod(shape[1:])) if len(shape) >= 2 else 0
            std = _finite_std(a) if a.size > 1 else float("nan")
            result.append(Distribution(name, shape, counts, edges, std, fan_in, sample.size))
        return result

    def tree_lines(self):
        """The tree as indented text lines (what the view prints, and handy in a notebook)."""
        lines = []
        for row in self._rows:
            indent = "  " * row.depth
            mode = "train" if row.training else "eval"
            own = f", {row.parameter_count:,} parameters" if row.parameter_count else ""
            lines.append(f"{indent}{row.label}: {row.class_name} [{mode}]{own}")
            for t in row.tensors:
                lines.append(f"{indent}  · {_describe(t)}")
        totals = self.totals()
        lines.append(
            f"total: {totals['parameters']:,} parameters ({totals['trainable']:,} trainable, "
            f"{totals['frozen']:,} frozen), {totals['buffers']:,} buffer elements"
        )
        return lines


def _finite_std(values):
    """The std of the finite values (a copy of them only when some are not finite)."""
    s = stats_of(values)
    if np.isfinite(s.std):
        return s.std
    finite = np.asarray(values)[np.isfinite(values)]
    return stats_of(finite).std if finite.size > 1 else float("nan")


def _join(prefix, name):
    return f"{prefix}.{name}" if prefix else name


def _lookup(module, qualified):
    """The parameter or buffer ``qualified`` ("0.parametrizations.weight.original") of ``module``."""
    prefix, _, name = qualified.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    return dict(owner.named_parameters(recurse=False)).get(
        name, dict(owner.named_buffers(recurse=False)).get(name))


_ORIGINAL = re.compile(r"original\d*")


def _parametrize_module_of(module):
    """``torch.nn.utils.parametrize`` or ``edutorch.nn.utils.parametrize``, matching ``module``."""
    return importlib.import_module(framework_of(module).__name__ + ".nn.utils.parametrize")


def derived_tensors(module):
    """``{name: (how, sources)}`` for the tensors ``module`` computes rather than stores.

    ``sources`` are names relative to ``module``. Two mechanisms, both visible
    through public attributes only:

    * ``parametrize`` (``register_parametrization``, ``parametrizations.*``):
      ``module.parametrizations[name]`` holds ``original`` (or ``original0``,
      ``original1``, ...), and reading ``module.<name>`` computes the tensor;
    * the hook-based ``weight_norm``/``spectral_norm``/pruning: ``<name>`` is a
      plain tensor attribute (in ``vars(module)``, not a parameter or buffer),
      next to the parameter ``<name>_orig`` (spectral norm; pruning: and the
      buffer ``<name>_mask``) or the parameters ``<name>_g`` and ``<name>_v``
      (weight norm), from which a forward pre-hook recomputes it.
    """
    found = {}
    try:
        parametrized = _parametrize_module_of(module).is_parametrized(module)
    except TypeError:  # not an edutorch or torch module
        parametrized = False
    if parametrized:
        for name, plist in module.parametrizations.items():
            stored = [n for n, _ in plist.named_parameters(recurse=False)]
            stored += [n for n, _ in plist.named_buffers(recurse=False)]
            found[name] = ("parametrize", tuple(f"parametrizations.{name}.{n}" for n in stored
                                                if _ORIGINAL.fullmatch(n)))
    parameters = dict(module.named_parameters(recurse=False))
    buffers = dict(module.named_buffers(recurse=False))
    for name, value in vars(module).items():
        if name.startswith("_") or not _is_tensor(value) or name in parameters or name in buffers:
            continue
        if f"{name}_orig" in parameters:
            extra = [f"{name}_mask"] if f"{name}_mask" in buffers else []
            found[name] = ("forward pre-hook", (f"{name}_orig", *extra))
        elif f"{name}_g" in parameters and f"{name}_v" in parameters:
            found[name] = ("forward pre-hook", (f"{name}_g", f"{name}_v"))
    return found


def derived_value(module, name):
    """The derived tensor ``module.<name>``, read without changing anything.

    A parametrization is read in eval mode (``spectral_norm`` would otherwise
    take a power-iteration step, updating its ``_u``/``_v`` buffers, on every
    read), without recording a graph; the training flags are put back.
    A hook-computed tensor is the value the last forward pre-hook left.
    """
    lib = framework_of(module)
    plist = None
    if _parametrize_module_of(module).is_parametrized(module, name):
        plist = module.parametrizations[name]
    if plist is None:
        return getattr(module, name).detach()
    modes = [(m, m.training) for m in plist.modules()]
    plist.eval()
    try:
        with lib.no_grad():
            return getattr(module, name).detach()
    finally:
        for m, mode in modes:
            m.training = mode


def _is_tensor(value):
    return hasattr(value, "shape") and hasattr(value, "requires_grad") and hasattr(value, "grad_fn")


def _describe(t):
    """'weight (256, 784) float32 cpu, requires_grad, 200,704' style text for one tensor."""
    own = t.name.rsplit(".", 1)[-1]
    if t.role == "derived":
        prefix = t.name[:-len(own)]  # "0." for "0.weight": sources are shown relative to it
        sources = ", ".join(s[len(prefix):] for s in t.related)
        when = ("a property, recomputed on every read" if t.how == "parametrize"
                else "set by a forward pre-hook at each forward")
        return (f"{own} {t.shape} {t.dtype} {t.device}, derived from {sources} ({when}), "
                f"not in state_dict, {t.numel:,} elements")
    flags = [t.kind]
    if t.requires_grad:
        flags.append("requires_grad")
    if t.kind == "buffer":
        flags.append("persistent" if t.persistent else "non-persistent")
    if t.has_grad:
        flags.append("has .grad")
    if t.role == "original":
        flags.append(f"original of {t.related[0]}")
    return f"{own} {t.shape} {t.dtype} {t.device}, {', '.join(flags)}, {t.numel:,} elements"
