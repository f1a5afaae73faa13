"""``torch.nn.modules.lazy.LazyModuleMixin``: layers that learn their input size at the first call.

``nn.LazyLinear(10)`` holds ``UninitializedParameter``s (no shape yet).  A
forward pre-hook calls ``initialize_parameters(input)`` at the first forward:
it materializes the parameters from the input's shape and runs the normal
initialisation; then the hook is removed and the module becomes
``cls_to_become`` (``nn.Linear``), as if it had been built with the right size.
"""
from ..parameter import is_lazy


class LazyModuleMixin:
    """Mix in before a Module class: ``class LazyLinear(LazyModuleMixin, Linear)``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """An uninitialized parameter is saved as itself (it has no values to detach)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Loading a checkpoint materializes the parameters with the checkpoint's shapes."""
        from ... import no_grad

        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the parameters from the first input (each lazy layer writes its own)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Does this module still hold a parameter or buffer without a shape?"""
        return any(is_lazy(t) for t in list(self._parameters.values()) + list(self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize, check, unhook, become ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become
