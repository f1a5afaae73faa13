"""Hook helpers (``torch/utils/hooks.py``): ``RemovableHandle`` and ``BackwardHook``.

``BackwardHook`` is how ``Module.register_full_backward_hook`` works.  A module
is not a node of the autograd graph, so PyTorch wraps the module's tensor
inputs and outputs in an *identity* Function (``BackwardHookFunction``):

    inputs --[identity A]--> forward(...) --[identity B]--> outputs

During backward, node B sees the gradients w.r.t. the module's outputs
(``grad_output``: backward pre-hooks run here) and node A sees the gradients
w.r.t. the module's inputs (``grad_input``: backward hooks run here).  A value
returned by a hook replaces those gradients.
"""
import warnings

from ..autograd import grad_mode
from ..autograd.function import Function, RemovableHandle  # noqa: F401  (re-exported)


class BackwardHookFunction(Function):
    """Identity on any number of tensors; its graph node is where module hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        # New tensor objects sharing storage and version counter (``detach``; apply
        # connects them to this node); those whose input does not require grad stay out.
        outs = tuple(a.detach() for a in args)
        ctx.mark_non_differentiable(*[o for o, a in zip(outs, args) if not a.requires_grad])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        # The identity.  Outputs that got no gradient arrive as zeros (materialized
        # by the engine), so a hook sees zeros for a tensor input without grad, as in PyTorch.
        return grads


def _pack_with_none(indices, values, size):
    """Spread ``values`` at ``indices`` of a tuple of ``size`` Nones."""
    res = [None] * size
    for idx, val in zip(indices, values):
        res[idx] = val
    return tuple(res)


def _unpack_none(indices, values):
    return tuple(values[idx] for idx in indices)


class BackwardHook:
    """Runs a module's full backward (pre-)hooks with ``grad_input``/``grad_output`` tuples."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _apply_on_tensors(self, fn, args):
        """Pass the tensors of ``args`` through the identity; call ``fn(its node)``."""
        from .._tensor import Tensor

        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        requires_grad = any(t.requires_grad for t in tensors)
        if not (requires_grad and grad_mode.is_grad_enabled()):
            return args, None

        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        node = next(t.grad_fn for t in new_tensors if t.grad_fn is not None)
        fn(node)

        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args):
        """Wrap the module's inputs; the node's post-hook runs the user backward hooks."""
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def _set_user_hook(self, node):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # The gradient reached the inputs without passing through the
                # outputs (e.g. double backward): nothing to report.
                return None
            res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return _unpack_none(self.input_tensors_index, res)

        node.register_hook(hook)

    def setup_output_hook(self, args):
        """Wrap the module's outputs; the node's pre-hook records ``grad_output``."""
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(self._set_output_hook, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]

    def _set_output_hook(self, node):
        def hook(grad_output):
            self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
            for user_pre_hook in self.user_pre_hooks:
                new = user_pre_hook(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != len(self.grad_outputs):
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {len(new)}, but expected {len(self.grad_outputs)}"
                    )
                self.grad_outputs = new
            local_grad_outputs = self.grad_outputs

            # No input requires grad: node A never runs, so call the user hooks now.
            if self.input_tensors_index is None:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients. See "
                    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                    "#torch.nn.Module.register_full_backward_hook for more details.",
                    stacklevel=5,
                )
                grad_inputs = _pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient should "
                            "always return None or None for all gradients."
                        )
                self.grad_outputs = None
            return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

        node.register_prehook(hook)
