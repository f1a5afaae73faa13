"""``torch.nn.Module``: the base class of every layer and model.

A Module keeps four registries, filled by plain attribute assignment
(``__setattr__`` looks at the type of the value):

* ``_parameters``: ``Parameter`` objects (trained by the optimizer);
* ``_buffers``: tensors that are state but not trained (``running_mean``);
  names in ``_non_persistent_buffers_set`` are left out of ``state_dict``;
* ``_modules``: child modules, which makes a tree;
* hook dictionaries, run by ``__call__`` around ``forward``.

Everything else (``named_parameters``, ``state_dict``, ``to``, ``train``,
``repr``) is a walk over that tree in registration order.  The file follows
``torch/nn/modules/module.py`` section by section.
"""
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _dtype
from ..._tensor import Tensor, typename
from ...autograd import grad_mode
from ...autograd.function import RemovableHandle
from ..parameter import Buffer, Parameter

__all__ = [
    "register_module_forward_pre_hook", "register_module_forward_hook",
    "register_module_full_backward_pre_hook", "register_module_full_backward_hook", "Module",
]

# -- global hooks: run for every module, before the module's own hooks ----------
# OrderedDicts, as in PyTorch (a RemovableHandle keeps a weak reference to them).
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_MIXED_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                         "Please use only one of them.")
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, num_spaces):
    """Indent every line but the first (how nested module reprs are laid out)."""
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


def register_module_forward_pre_hook(hook):
    """A forward pre-hook ``hook(module, args)`` run for every module's call."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook ``hook(module, args, output)`` run for every module's call."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook ``hook(module, grad_output)`` for every module."""
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook):
    """A backward hook ``hook(module, grad_input, grad_output)`` for every module."""
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def _forward_unimplemented(self, *input):
    """The ``forward`` of a Module subclass that forgot to define one."""
    # PyTorch raises NotImplementedError here: a subclass must override forward.
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class for all neural network modules (``torch.nn.Module``).

    Subclasses call ``super().__init__()`` first, then assign parameters,
    buffers and submodules as attributes, and define ``forward``.
    """

    dump_patches = False
    _version = 1  # stored in state_dict()._metadata, as PyTorch does
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        # object.__setattr__: our own __setattr__ needs these dicts to exist first.
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", OrderedDict())
        setattr_("_buffers", OrderedDict())
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)  # True: full hooks, False: the deprecated kind
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", OrderedDict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # -- registration --------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is module state but not a parameter (e.g. ``running_mean``)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (or reserve the name with ``None``)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module, reachable as ``self.<name>``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``"net.0"``); ``""`` is ``self``."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at the dotted path ``target`` (``"net.0.weight"``)."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path ``target`` (``"bn.running_mean"``)."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    # -- attribute access: the registries behave like attributes -------------
    def __getattr__(self, name):
        # Only called when normal lookup fails, i.e. for registered names.
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        """Route Parameters, Modules and buffers into their registries."""

        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (
            dir(self.__class__) + list(self.__dict__) + list(self._parameters)
            + list(self._modules) + list(self._buffers)
        )
        # drop names that are not valid attributes (children of Sequential: "0", "1")
        return sorted(key for key in keys if not key[0].isdigit())

    # -- iteration over the tree ---------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        """Walk modules and yield ``(dotted name, member)``; shared members once."""
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Iterator over parameters (of submodules too, if ``recurse``)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(name, parameter)``, e.g. ``("0.weight", Parameter)``."""
        yield from self._named_members(
            lambda module: module._parameters.items(), prefix=prefix, recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse=True):
        """Iterator over buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(name, buffer)``."""
        yield from self._named_members(
            lambda module: module._buffers.items(), prefix=prefix, recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self):
        """Iterator over immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """Iterator over ``(name, child)``; a module registered twice appears once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """Iterator over all modules of the tree, ``self`` first (depth-first)."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over ``(dotted name, module)``, ``("", self)`` first, depth-first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # -- modes and bulk changes ----------------------------------------------
    def train(self, mode=True):
        """Set training mode on this module and all its children; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Evaluation mode (``train(False)``): Dropout and BatchNorm behave differently."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter (freeze with ``False``); returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to ``None`` by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first), then on ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's values by ``fn(tensor)``.

        Parameters keep their identity (an optimizer holding them still works):
        only their storage (``.data``) is swapped, as ``param.data = ...`` does
        in PyTorch.  Buffers are replaced by the new tensor.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with grad_mode.no_grad():
                new = fn(param)
                if new.is_meta != param.is_meta:  # PyTorch: another kind of storage, a new Parameter object
                    self._parameters[key] = type(param)(new, param.requires_grad)
                    continue
                param.data = new
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to_empty(self, *, device, recurse=True):
        """New, uninitialized storage on ``device`` for every parameter and buffer (same shapes and
        dtypes): how a model built on the ``meta`` device gets memory; then initialize or load it."""
        from ... import _creation

        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse)

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(tensor)``.

        A dtype applies to floating-point tensors only (integer buffers such
        as ``num_batches_tracked`` keep their type).
        """
        device, dtype = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)

        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def share_memory(self):
        """Move every parameter, gradient and buffer into shared memory (``Tensor.share_memory_``),
        so processes started afterwards update one model: Hogwild training."""
        for p in self.parameters():
            p.share_memory_()
            if p.grad is not None:
                p.grad.share_memory_()
        for b in self.buffers():
            b.share_memory_()
        return self

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- calling: forward with hooks ------------------------------------------
    def _call_impl(self, *args, **kwargs):
        """``module(x)``: run ``forward`` between the forward/backward hooks."""
        # Fast path: no hooks anywhere, so calling costs one function call.
        if not (
            self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
            or self._forward_pre_hooks or _global_backward_pre_hooks or _global_backward_hooks
            or _global_forward_hooks or _global_forward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        called_always_called_hooks = set()
        state = {"args": args, "kwargs": kwargs, "result": None}
        try:
            return self._call_with_hooks(state, called_always_called_hooks)
        except Exception:
            self._run_always_called_hooks(state, called_always_called_hooks)
            raise

    __call__ = _call_impl

    def _call_with_hooks(self, state, called_always_called_hooks):
        """The slow path of ``__call__``, in PyTorch's order (see ``_call_impl``)."""
        args, kwargs = state["args"], state["kwargs"]
        backward_pre_hooks = []
        if self._backward_pre_hooks or _global_backward_pre_hooks:
            backward_pre_hooks = self._get_backward_pre_hooks()
        full_backward_hooks = []
        if self._backward_hooks or _global_backward_hooks:
            full_backward_hooks = self._get_backward_hooks()
        old_style_hooks = list(self._backward_hooks.values()) if self._is_full_backward_hook is False else []

        # 1. forward pre-hooks (global first): may replace the inputs
        for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                new = hook(self, args, kwargs)
                if new is not None:
                    if isinstance(new, tuple) and len(new) == 2:
                        args, kwargs = new
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {new}."
                        )
            else:
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        state["args"], state["kwargs"] = args, kwargs

        # 2. backward hooks: route the inputs through an identity node
        bw_hook = None
        if full_backward_hooks or backward_pre_hooks:
            from ...utils.hooks import BackwardHook  # torch/utils/hooks.py

            bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
            args = bw_hook.setup_input_hook(args)

        # 3. forward, then forward hooks (global first): may replace the output
        result = self.forward(*args, **kwargs)
        state["result"] = result
        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                called_always_called_hooks.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                new = hook(self, args, kwargs, result)
            else:
                new = hook(self, args, result)
            if new is not None:
                result = new
            state["result"] = result

        # 4. backward hooks: route the outputs through an identity node
        if bw_hook:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}"
                )
            result = bw_hook.setup_output_hook(result)
        if old_style_hooks:
            _register_old_style_backward_hooks(self, old_style_hooks, args, result)
        return result

    def _run_always_called_hooks(self, state, already_called):
        """After forward raised: run hooks registered with ``always_call=True``."""
        args, kwargs, result = state["args"], state["kwargs"], state["result"]
        for hook_id, hook in _global_forward_hooks.items():
            if hook_id in _global_forward_hooks_always_called and hook_id not in already_called:
                try:
                    new = hook(self, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn(
                        "global module forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {str(e)}"
                    )
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in already_called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        new = hook(self, args, kwargs, result)
                    else:
                        new = hook(self, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception that "
                        f"was silenced as another error was raised in forward: {str(e)}"
                    )

    def _get_backward_hooks(self):
        """Full backward hooks to run: global ones, then the module's."""
        if self._is_full_backward_hook is False:
            return [*_global_backward_hooks.values()]
        return [*_global_backward_hooks.values(), *self._backward_hooks.values()]

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # -- hook registration ------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) runs before ``forward``.

        Returning a value replaces the inputs.  ``prepend=True`` runs it first.
        """
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` runs after ``forward``; returning a value replaces the output.

        ``always_call=True``: it runs even when ``forward`` raises.
        """
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the outputs are known."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the inputs are known.

        ``grad_input`` has one entry per positional input (``None`` for
        non-tensors and tensors that do not require grad); returning a tuple
        replaces it.
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The deprecated backward hook: ``hook(module, grad_input, grad_output)`` on the last op only.

        It is attached to the ``grad_fn`` of the module's output, so ``grad_input``
        holds the gradients w.r.t. the inputs of the module's *last operation*
        (for ``Linear`` that may include the weight), not w.r.t. the module's
        inputs.  PyTorch warns (``FutureWarning``) at each forward where that
        differs; use ``register_full_backward_hook``.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    # -- state_dict ---------------------------------------------------------------
    def _register_state_dict_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after this module's entries are saved."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Public form of the post-hook; it must return ``None``."""
        hook._from_public_api = True
        return self._register_state_dict_hook(hook)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """``hook(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)``."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        if with_module:
            module = self
            self._load_state_dict_pre_hooks[handle.id] = lambda *a: hook(module, *a)
        else:
            self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors)``."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict``; may edit the key lists."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to store non-tensor state in ``state_dict``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def set_extra_state(self, state):
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def _has_extra_state(self, method):
        return getattr(type(self), method) is not getattr(Module, method)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Put this module's own parameters and persistent buffers into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer, by dotted name.

        Order: this module's parameters, its buffers, then each child's entries.
        Values are detached tensors sharing storage with the module (unless
        ``keep_vars``).  ``._metadata`` records each module's version.
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
                stacklevel=2,
            )
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata

        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """Copy this module's own entries from ``state_dict``; record what does not fit.

        Override it to convert old checkpoints (BatchNorm adds a missing
        ``num_batches_tracked``).  Children are loaded by ``load_state_dict``.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)

        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_name_params = itertools.chain(self._parameters.items(), persistent_buffers.items())
        local_state = {k: v for k, v in local_name_params if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)

        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(input_param)}"
                )
                continue
            # Backward compatibility: loading 1-dim tensor from 0.3.* to version 0.4+
            if len(param.shape) == 0 and len(input_param.shape) == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            if param.is_meta and not input_param.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter "
                              "in the current model, which is a no-op. (Did you mean to pass `assign=True` to "
                              "assign items in the state dictionary to their corresponding key in the module "
                              "instead of copying them in place?)", UserWarning, stacklevel=3)
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        self._assign_loaded(name, param, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{param.size()} and whose dimensions in the checkpoint are "
                    f"{input_param.size()}, an exception occurred : {ex.args}."
                )

        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)

        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:  # "child.weight": must belong to a child module
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def _assign_loaded(self, name, param, input_param):
        """``load_state_dict(assign=True)``: use the checkpoint's tensor itself."""
        if isinstance(param, Parameter):
            if not isinstance(input_param, Parameter):
                input_param = Parameter(input_param, requires_grad=param.requires_grad)
            else:
                input_param.requires_grad_(param.requires_grad)
        setattr(self, name, input_param)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``; with
        ``strict=True`` any missing or unexpected key (or a size mismatch)
        raises a RuntimeError that names every bad key.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []

        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # a copy that _load_from_state_dict may modify
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible_keys)
                if out is not None:
                    raise RuntimeError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                        "expected to return new values, if incompatible_keys need to be modified,"
                        "it should be done inplace."
                    )

        load(self, state_dict)

        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected_keys))
                )
            if missing_keys:
                error_msgs.insert(
                    0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing_keys))
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(error_msgs))
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- printing ----------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside ``Linear(...)``; override it in your module (one line or several)."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines

        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:  # a one-liner: Linear(in_features=...)
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


def _parse_to(*args, **kwargs):
    """Read ``to``'s arguments: ``(device)``, ``(dtype)``, ``(tensor)``, ``(device, dtype)``."""
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for a in args:
        if isinstance(a, bool):  # the positional ``non_blocking`` flag: nothing to do on NumPy
            continue
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif a is not None:
            device = a
    return device, dtype


def _register_old_style_backward_hooks(module, hooks, inputs, result):
    """``register_backward_hook``: hook the ``grad_fn`` of the (first) output, and warn as PyTorch does."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(lambda grad_inputs, grad_outputs, hook=hook: hook(module, grad_inputs, grad_outputs))
    outputs = result if isinstance(result, tuple) else (result,)
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    if not all(isinstance(t, Tensor) for t in outputs) or not all(isinstance(t, Tensor) for t in inputs):
        what = "return a single Tensor or a tuple of Tensors" if not all(isinstance(t, Tensor) for t in outputs) \
            else "take as input a single Tensor or a tuple of Tensors"
        missing = "grad_output" if what.startswith("return") else "grad_input"
        warnings.warn(f"Using non-full backward hooks on a Module that does not {what} is deprecated and will be "
                      f"removed in future versions. This hook will be missing some of the {missing}. Please use "
                      "register_full_backward_hook to get the documented behavior.", FutureWarning, stacklevel=3)
        return
    output_nodes = {t.grad_fn for t in outputs if t.grad_fn is not None}
    if len(output_nodes) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output. Please use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=3)
    elif {t.grad_fn for t in inputs if t.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
        warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=3)
