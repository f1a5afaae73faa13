"""``torch.utils.checkpoint``: trade compute for memory by recomputing in backward.

Without checkpointing, every tensor an op saves for backward (activations,
mostly) stays alive from the forward pass until backward has used it.
``checkpoint(function, *args, use_reentrant=...)`` keeps only the inputs of
``function`` and recomputes what it saved when backward needs it.  PyTorch has
two algorithms, both here:

``use_reentrant=False`` (PyTorch's recommendation): ``function`` runs with the
graph recorded as usual, but inside ``saved_tensors_hooks`` whose pack hook
stores only a small *holder* for each saved tensor.  The first time backward
unpacks one, the unpack hook runs ``function`` again on the saved inputs, with
a second pair of hooks that fills the holders with the recomputed tensors, and
stops as soon as the last holder is filled ("early stop").  Every later unpack
in the same backward pass is served from that one recomputation.  Because the
graph is the ordinary one, ``autograd.grad``, ``backward(inputs=...)``, inputs
that do not require grad, nested structures and keyword arguments all work.

``use_reentrant=True`` (the older one): ``function`` runs under ``no_grad``, so
nothing inside is saved; ``CheckpointFunction.backward`` runs it again with a
graph and calls ``autograd.backward`` on that fresh graph: a backward pass
inside a backward pass ("reentrant").

Both save and restore the random state, so a ``Dropout`` inside ``function``
drops the same units both times, and the autocast state (each device's
enabled flag, dtype and cache flag), so a ``function`` run under
``torch.autocast`` is recomputed in the same dtypes.

How much memory does it save?  Count the bytes held by saved tensors with a
pack hook (:func:`saved_tensor_bytes`, a helper of edutorch, not PyTorch's)::

    model = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.ReLU()) for _ in range(16)])
    x = torch.randn(32, 64, requires_grad=True)
    _, plain = saved_tensor_bytes(lambda: model(x))      # 512 KiB: grows like N = 16
    _, kept = saved_tensor_bytes(lambda: checkpoint_sequential(model, 4, x, use_reentrant=False))
    # 152 KiB: 3 segment inputs + the 4 blocks of the last segment, about 2 * sqrt(N) blocks

``benchmarks/scenarios/checkpoint.py`` (``memory_rows``) makes the table for several N.
"""
import contextlib
import warnings
import weakref
from collections import defaultdict

from .. import random as _random
from ..amp import autocast_mode as _autocast_mode
from .._scope import module_getattr as _module_getattr
from ..autograd import _saved_tensor
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import saved_tensors_hooks
from .._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "noop_context_fn", "set_checkpoint_early_stop", "saved_tensor_bytes", "detach_variable",
           "check_backward_validity"]


def noop_context_fn():
    """The default ``context_fn``: no context around the forward nor the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` keeping only its inputs; recompute its saved tensors in backward.

    ``preserve_rng_state=True`` (a keyword) restores the random state for the
    recomputation.  ``context_fn``, ``determinism_check`` and ``early_stop``
    apply to ``use_reentrant=False`` only, as in PyTorch.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        check_backward_validity(args)
        return CheckpointFunction.apply(function, preserve, *args)
    if debug:
        raise ValueError(
            "checkpoint(debug=True) is not available in edutorch: it logs every dispatched "
            "operator, and edutorch has no dispatcher"
        )
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a ``Sequential`` or a list) in ``segments`` chunks, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
            "the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end + 1), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions))(input)  # the last segment keeps its activations


def saved_tensor_bytes(fn):
    """Run ``fn()`` and return ``(result, bytes)``: how many bytes of tensors its graph saved.

    A ``saved_tensors_hooks`` pack hook that adds up ``nbytes`` of every tensor
    saved for backward (the memory a graph holds until backward).  Inside a
    non-reentrant ``checkpoint`` the checkpoint's own hooks apply instead, so
    only what checkpointing keeps (its inputs) is counted there.  A tensor saved
    by two ops is counted twice.
    """
    total = [0]

    def pack(t):
        total[0] += t.nbytes
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        result = fn()
    return result, total[0]


# -- use_reentrant=True ----------------------------------------------------------------
def check_backward_validity(inputs):
    """Warn when no input requires grad: the reentrant checkpoint then gives no gradients."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)


def detach_variable(inputs):
    """A tuple of ``inputs`` with each tensor detached, keeping its ``requires_grad`` flag."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs)


class CheckpointFunction(Function):
    """Forward without a graph; backward recomputes ``function`` and differentiates it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = _random.get_rng_state()
        ctx.autocast_state = _autocast_state()
        ctx.save_for_backward(*(a if isinstance(a, Tensor) else None for a in args))
        ctx.non_tensor_args = [None if isinstance(a, Tensor) else a for a in args]
        return run_function(*args)  # grad mode is off inside forward: nothing is saved

    @staticmethod
    def backward(ctx, *grad_outputs):
        if not _saved_tensor.is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing "
                "an `inputs` parameter to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing the `inputs` argument."
            )
        saved = ctx.saved_tensors
        # fresh leaves that share the inputs' values: the recomputed graph starts at them
        inputs = detach_variable(tuple(ctx.non_tensor_args[i] if t is None else t for i, t in enumerate(saved)))
        with _same_random_numbers(ctx.rng_state if ctx.preserve_rng_state else None), \
                _same_autocast(ctx.autocast_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(x.grad if isinstance(x, Tensor) and x.requires_grad else None for x in inputs)
        return (None, None) + grads


@contextlib.contextmanager
def _same_random_numbers(state):
    """Run the block from random state ``state`` (None: untouched), then restore the current one."""
    if state is None:
        yield
        return
    current = _random.get_rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(current)


# -- use_reentrant=False -----------------------------------------------------------------
def _autocast_state():
    """Each device's autocast settings now, as PyTorch's checkpoint records them in forward."""
    return {device: {"enabled": _autocast_mode.is_autocast_enabled(device),
                     "dtype": _autocast_mode.get_autocast_dtype(device),
                     "cache_enabled": _autocast_mode.is_autocast_cache_enabled()}
            for device in ("cpu", "cuda")}


@contextlib.contextmanager
def _same_autocast(state):
    """Run the block under the autocast settings ``state`` (from :func:`_autocast_state`)."""
    with contextlib.ExitStack() as stack:
        for device, settings in state.items():
            stack.enter_context(_autocast_mode.autocast(device, **settings))
        yield


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


_early_stop = {"enabled": None}  # set_checkpoint_early_stop overrides checkpoint(early_stop=)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints made inside this block stop recomputing early."""
    previous = _early_stop["enabled"]
    _early_stop["enabled"] = enable
    try:
        yield
    finally:
        _early_stop["enabled"] = previous


class _StopRecomputationError(Exception):
    """Raised by the recomputation's pack hook once every needed tensor is back."""


class _Handle:
    """The key of one recomputed tensor; dropping it frees that tensor."""


class _Holder:
    """What the graph keeps instead of a saved tensor: per backward pass, a handle to its recomputation."""

    def __init__(self):
        self.handles = {}  # backward pass id -> _Handle (None once unpacked)


def _metadata(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


class _CheckpointFrame:
    """One checkpointed call: its saved inputs, a holder per saved tensor, the recomputations."""

    def __init__(self, recompute_fn, early_stop, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args = []
        self.weak_holders = []  # one per tensor the forward saved, in saving order
        self.x_metadatas = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)  # pass id -> {handle: tensor}
        self.recomp_counter = defaultdict(int)  # pass id -> tensors saved so far by the recomputation
        self.is_recomputed = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        """Keep the inputs as any op keeps a saved tensor: version-checked, or packed by outer hooks."""
        self.saved_args = [_saved_tensor.SavedVariable(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack() if isinstance(a, _saved_tensor.SavedVariable) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        """PyTorch's determinism check: as many saved tensors, with the same shape/dtype/device."""
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original "
                "forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
            )
        mismatched = ""
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            x_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if x_meta != recomputed_meta:
                mismatched += (f"tensor at position {idx}:\nsaved metadata: {x_meta}\n"
                               f"recomputed metadata: {recomputed_meta}\n")
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different "
                f"metadata than during the forward pass.\n{mismatched}.\n"
            )


class _checkpoint_hook(saved_tensors_hooks):
    """The hooks around the original forward: pack stores a holder, unpack recomputes once per pass."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = _saved_tensor.current_graph_task_id()
            if gid == -1:  # outside backward (e.g. reading saved_tensors by hand): a fresh recomputation
                gid = object()
            if not frame.is_recomputed[gid]:
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*frame.get_inputs())
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            if holder.handles[gid] is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                    "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do "
                    "so only once. Otherwise please open an issue with details on your use case."
                )
            tensor = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None  # the handle goes, and with it the recomputed tensor's last reference
            return tensor

        super().__init__(pack_hook, unpack_hook)


class _recomputation_hook(saved_tensors_hooks):
    """The hooks around the recomputation: pack puts each tensor into the next holder."""

    def __init__(self, frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x  # the graph is rebuilt by SavedTensor.unpack
            frame = frame_ref()
            index = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if index >= len(frame.weak_holders):
                if not frame.forward_completed:  # a nested checkpoint recomputed inside the forward
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation than "
                    "during the original forward pass.\n"
                )
            holder = frame.weak_holders[index]()
            if holder is not None:  # None: that saved tensor's node is gone, nothing to fill
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError  # every needed tensor is back: stop the forward here
            return x

        super().__init__(pack_hook, lambda x: x)


def _checkpoint_without_reentrant(fn, preserve_rng_state, context_fn, determinism_check, early_stop,
                                  args, kwargs):
    """Run ``fn`` under the holder-storing hooks; the frame recomputes it when backward needs it."""
    checks = {"default": _metadata, "none": lambda _: None}
    if determinism_check not in checks:
        raise ValueError(f"determinism_check should be one of {list(checks)}, but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():  # no graph, nothing would be saved: an ordinary call
        return fn(*args, **kwargs)
    rng_state = _random.get_rng_state() if preserve_rng_state else None
    autocast_state = _autocast_state()

    def recompute_fn(*inputs):
        with _same_random_numbers(rng_state), _same_autocast(autocast_state), recompute_context:
            fn(*inputs, **kwargs)

    enabled = _early_stop["enabled"]
    frame = _CheckpointFrame(recompute_fn, early_stop if enabled is None else enabled, checks[determinism_check])
    frame.save_inputs(*args)
    with _checkpoint_hook(frame), forward_context:
        result = fn(*args, **kwargs)
    frame.forward_completed = True
    return result


__getattr__ = _module_getattr("torch.utils.checkpoint", "edutorch.utils.checkpoint")  # out-of-scope names say why
