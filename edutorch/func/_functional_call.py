"""``torch.func.functional_call`` and ``stack_module_state``: a module as a function of its parameters.

    params = {k: v.detach() for k, v in model.named_parameters()}
    out = functional_call(model, params, (x,))   # model(x) computed with ``params``

``functional_call`` swaps the given tensors in for the module's parameters
and buffers (by their dotted names, as in ``state_dict``), calls the module
and puts the originals back, so the tensors can be the inputs of ``grad`` or
``vmap``.  As PyTorch does, it writes them straight into the owning module's
``_parameters``/``_buffers`` dicts (``setattr`` would refuse a plain tensor
for a parameter name).
"""
from .._tensor import Tensor

_MISSING = object()


def _owner(module, name):
    """``(submodule, attribute)`` for a dotted name: ``"0.weight"`` -> ``(module[0], "weight")``."""
    prefix, _, attr = name.rpartition(".")
    return (module.get_submodule(prefix) if prefix else module), attr


def _swap(module, name, value):
    """Put ``value`` where ``name`` is; return what was there (``_MISSING`` if nothing)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    owner, attr = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old, table[attr] = table[attr], value
            return old
    old = owner.__dict__.get(attr, _MISSING)
    object.__setattr__(owner, attr, value)
    return old


def _restore(module, name, old):
    owner, attr = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            table[attr] = old
            return
    if old is _MISSING:
        object.__delattr__(owner, attr)
    else:
        object.__setattr__(owner, attr, old)


def _tied_groups(module):
    """Lists of names that share one tensor (``decoder.weight = encoder.weight``)."""
    by_tensor = {}
    named = list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False))
    for name, t in named:
        by_tensor.setdefault(id(t), []).append(name)
    return [names for names in by_tensor.values() if len(names) > 1]


def _untie(module, values):
    """Give every name tied to a given one the same value (``tie_weights=True``)."""
    values = dict(values)
    for names in _tied_groups(module):
        given = [n for n in names if n in values]
        if not given:
            continue
        if any(values[n] is not values[given[0]] for n in given):
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in names:
            values[n] = values[given[0]]
    return values


def _check_strict(module, values):
    names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    messages = []
    unexpected = sorted(set(values) - names)
    missing = sorted(names - set(values))
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(messages))


def _merged(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, (list, tuple)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    seen, repeated, merged = set(), [], {}
    for d in parameter_and_buffer_dicts:
        for k in d:
            if k in seen and k not in repeated:
                repeated.append(k)
            seen.add(k)
        merged.update(d)
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """``module(*args, **kwargs)`` computed with the given parameters and buffers instead of its own.

    ``parameter_and_buffer_dicts``: a dict (or a tuple of dicts with distinct keys)
    from dotted names to tensors; names not given keep the module's own tensors
    (``strict=True`` requires every name, and no other).  ``args`` that is not a
    tuple is the single positional argument.  With ``tie_weights`` a value given
    for one of several tied names is used for all of them.
    """
    values = _merged(parameter_and_buffer_dicts)
    if tie_weights:
        values = _untie(module, values)
    if strict:
        _check_strict(module, values)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    saved = []
    try:
        for name, value in values.items():
            saved.append((name, _swap(module, name, value)))
        return module(*args, **(kwargs or {}))
    finally:
        for name, old in reversed(saved):
            _restore(module, name, old)


def _stacked_leaf(tensors, name):
    from .._functional import stack

    if len({t.requires_grad for t in tensors}) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if tensors[0].requires_grad else result


def stack_module_state(models):
    """``torch.func.stack_module_state``: the parameters and buffers of same-class models, stacked.

    Returns ``(params, buffers)``, dicts whose tensors have a new leading
    dimension (one slice per model), for model ensembling with
    ``vmap(functional_call...)``.  Stacked parameters are new leaves that require grad.
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
