"""``torch.autograd.graph``: the backward graph's node type, and hooks on saved tensors.

``Node`` is the base class of every ``grad_fn`` (``y.grad_fn`` is an instance
of a subclass such as ``MulBackward0``); ``isinstance(y.grad_fn, Node)`` and
``node.next_functions``/``node.name()``/``node.register_hook`` work as in PyTorch.

Saved-tensor hooks decide how the tensors a graph keeps for backward are
stored.  Inside ``saved_tensors_hooks(pack_hook, unpack_hook)`` every tensor an
op saves (``ctx.save_for_backward`` in a custom ``Function``, or what a
built-in op saves: ``x.exp()`` its result, ``a * b`` both operands) is handed
to ``pack_hook`` at once, and the graph keeps whatever it returns.  Each time
backward reads the tensor, ``unpack_hook(packed)`` must give it back::

    def pack_hook(x):
        print("Packing", x)
        return x.detach()

    def unpack_hook(x):
        print("Unpacking", x)
        return x

    a = torch.ones(5, requires_grad=True)
    b = torch.ones(5, requires_grad=True) * 2
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b              # Packing a, Packing b
    y.sum().backward()         # Unpacking a, Unpacking b

``save_on_cpu`` and the non-reentrant ``torch.utils.checkpoint.checkpoint`` are
both built on this.  The bookkeeping (hook stack, the packed entry) lives in
``_saved_tensor.py``.
"""
import contextlib

from . import _saved_tensor
from .function import Node, RemovableHandle

__all__ = ["Node", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "increment_version"]


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable).

    For in-place changes autograd cannot see (writing into ``t.numpy()``): a
    graph that saved the tensor then raises the in-place error in backward.
    """
    from .function import _Tensor

    for t in (tensor,) if isinstance(tensor, _Tensor) else tensor:
        t._version_counter[0] += 1


class saved_tensors_hooks:
    """Context manager: pack every tensor saved for backward with ``pack_hook``, unpack with ``unpack_hook``.

    ``pack_hook(tensor) -> Any`` runs when an op saves ``tensor`` (grad mode off,
    and it must not modify ``tensor`` in place); ``unpack_hook(packed) -> Tensor``
    runs each time the saved tensor is accessed and should return a tensor with
    the same content.  Nested, only the innermost pair applies.  Tensors packed
    by hooks are not checked for in-place changes (the hooks may store copies).
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_tensor.push_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _saved_tensor.pop_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Context manager: keep saved tensors on the CPU, move them back to their device for backward.

    The GPU-memory saver of PyTorch: a CUDA (CuPy) tensor is copied to host
    memory when saved and copied back when backward needs it.  A tensor already
    on the CPU is kept as it is (``tensor.cpu()`` is the tensor itself), unless
    ``pin_memory=True``, which always makes a host copy (pinned when CUDA is
    available; with CuPy the copy is an ordinary host array).
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        from .. import _creation

        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = _creation.empty(tensor.size(), dtype=tensor.dtype)
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager: while active, using saved-tensor hooks raises ``RuntimeError(error_message)``.

    For features that cannot work with saved-tensor hooks.  Entering it while a
    pair of hooks is active raises the same error; nested, the inner message
    applies and the outer one comes back on exit.
    """
    previous = _saved_tensor.get_disabled_error_message()
    try:
        _saved_tensor.disable(error_message)
        yield
    finally:
        if previous is None:
            _saved_tensor.enable()
        else:
            _saved_tensor.disable(previous)
