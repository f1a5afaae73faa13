"""``torch.optim.Optimizer``: parameter groups, per-parameter state, state_dict.

An optimizer holds

* ``param_groups``: a list of dicts. Each has ``"params"`` (the tensors) and
  every hyper-parameter (``lr``, ``momentum``...). A value missing from a
  group is filled in from ``defaults``, so groups can differ (e.g. a smaller
  ``lr`` for a pretrained backbone);
* ``state``: a ``defaultdict(dict)`` keyed by the parameter itself, holding
  what the algorithm remembers between steps (momentum buffers, Adam's
  moment estimates, the step count).

``step()`` is written by each algorithm (``sgd.py``, ``adam.py``...) as
PyTorch's ``_single_tensor_*`` functions are: in-place Tensor ops
(``p.add_(g, alpha=-lr)``, ``exp_avg.lerp_(g, 1 - beta1)``) under ``no_grad``,
so the update is not part of any graph and bumps each parameter's version.
"""
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from functools import wraps
from itertools import chain

from .. import float32, tensor, zeros_like
from .._tensor import Tensor, typename
from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..profiler._recorder import record_function
from ..utils.hooks import RemovableHandle

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def _add_hook(hooks, hook, prepend=False):
    """Put ``hook`` into the ordered dict ``hooks`` (first if ``prepend``); return its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``."""
    return _add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return _add_hook(_global_step_post_hooks, hook)


def _use_step_hooks(step):
    """Decorate an algorithm's ``step`` so step pre/post hooks run around it.

    PyTorch patches ``step`` the same way: global hooks first, then the
    optimizer's own. A pre hook may return ``(new_args, new_kwargs)``.
    """

    @wraps(step)
    def step_with_hooks(self, *args, **kwargs):
        # PyTorch's profiler event for the whole step, hooks included: "Optimizer.step#SGD.step"
        with record_function(f"Optimizer.step#{type(self).__name__}.step"):
            return _step_and_hooks(self, args, kwargs)

    def _step_and_hooks(self, args, kwargs):
        for hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        # the update is not part of any graph (unless ``differentiable=True``, as in PyTorch)
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            out = step(self, *args, **kwargs)
        self._opt_called = True  # lets an LR scheduler check the call order
        for hook in chain(self._optimizer_step_post_hooks.values(), _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    return step_with_hooks


def _evaluate_closure(closure):
    """``step(closure)``: re-evaluate the model (with grad on, inside the step's
    ``no_grad``) and return the loss."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _check_adam_arguments(lr, betas, eps, weight_decay):
    """The argument checks of Adam and its variants (Adamax, NAdam, RAdam), PyTorch's messages."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _step_gradient(param, grad, *, lr, weight_decay, maximize, decoupled_weight_decay=False):
    """The gradient one step uses, as every ``_single_tensor_*`` begins.

    Negated when maximizing; weight decay is either added to it (``g + wd * p``,
    the L2 penalty's gradient) or, decoupled (AdamW), taken off ``param``
    directly (``p *= 1 - lr * wd``).
    """
    grad = grad if not maximize else -grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    return grad


def _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2):
    """Adam's running averages, in place, for its variants (NAdam, RAdam; ``adam.py`` spells them out):
    ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 v + (1 - beta2) g²``."""
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


def _params_with_grad(optimizer):
    """``(p, group)`` for every parameter that has a gradient, group by group (the others are skipped)."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                yield p, group


def _lazy_state(optimizer, p, buffers=(), **scalars):
    """``optimizer.state[p]``, made on the first step ``p`` has a gradient: ``step`` and the
    other ``scalars`` as float32 0-d tensors, then each of ``buffers`` as zeros shaped like ``p``."""
    state = optimizer.state[p]
    if len(state) == 0:
        state["step"] = _scalar_state()
        for name, value in scalars.items():
            state[name] = _scalar_state(value)
        for name in buffers:
            state[name] = _zeros_state(p)
    return state


def _scalar_state(value=0.0):
    """The ``state["step"]`` counter: a float32 0-d tensor on the CPU, as in PyTorch 2.x."""
    return tensor(value, dtype=float32)


def _zeros_state(p):
    """A fresh state buffer of zeros shaped like ``p`` (``torch.zeros_like(p, memory_format=...)``)."""
    return zeros_like(p)


class _RequiredParameter:
    """Marks a hyper-parameter with no default (``torch.optim.optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class of all optimizers (``torch.optim.Optimizer``)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + typename(params)
            )
        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # -- parameter groups ------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group of parameters (with its own hyper-parameters) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        self._split_param_names(param_group)

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    @staticmethod
    def _split_param_names(param_group):
        """``model.named_parameters()`` gives ``(name, tensor)`` pairs: keep the names aside."""
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names

    # -- gradients ---------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget the gradients: set ``p.grad`` to None (default) or fill it with zeros."""
        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):  # PyTorch's event
            self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
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

    def step(self, closure=None):
        """Update the parameters once (each algorithm overrides this)."""
        raise NotImplementedError(f"{type(self).__name__} does not define step()")

    # -- hooks --------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs before ``step``; returns a handle."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after ``step``; returns a handle."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- saving and loading --------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are replaced by their position (counting across groups), so the
        dict can be loaded into a fresh optimizer over a fresh copy of the model.
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index_of = {}
        param_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            param_groups.append(packed)
        state = {
            (index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        state_dict = {"state": state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()``: hyper-parameters and copies of the state buffers."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast_state(id_map[k], v)
            else:
                state[k] = v
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        """``copy.deepcopy`` and unpickling: the state, and no hooks (as PyTorch: the hooks
        are not part of ``__getstate__``)."""
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast_state(param, value, key=None):
    """Deep-copy a loaded state value; float buffers take the parameter's dtype ("step" stays)."""
    if isinstance(value, Tensor):
        value = value.detach().clone()
        if key == "step":  # the step counter stays a CPU float32 scalar
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, key=k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]
