"""NumPy's argument names, which PyTorch accepts too: ``x.sum(axis=0, keepdims=True)``.

PyTorch's argument parser treats ``axis`` as ``dim`` and ``keepdims`` as
``keepdim`` for every op.  Here every function or method with a ``dim`` or
``keepdim`` parameter is wrapped once, at import, by :func:`accept_numpy_names`.
"""
import functools
import inspect

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def accept_numpy_names(fn):
    """``fn`` that also takes ``axis=``/``keepdims=`` for its ``dim``/``keepdim`` parameters."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if not any(p in params for p in _ALIASES.values()) or getattr(fn, "_numpy_names", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for numpy_name, torch_name in _ALIASES.items():
                if numpy_name in kwargs and torch_name in params:
                    if torch_name in kwargs:
                        raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{numpy_name}'")
                    kwargs[torch_name] = kwargs.pop(numpy_name)
        return fn(*args, **kwargs)

    wrapper._numpy_names = True
    return wrapper


def patch_class(cls):
    """Wrap the methods ``cls`` defines itself."""
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and not name.startswith("__"):
            setattr(cls, name, accept_numpy_names(value))


def patch_module(namespace):
    """Wrap the public functions of a module's namespace (``globals()``) defined in it."""
    module = namespace["__name__"]
    for name, value in list(namespace.items()):
        if inspect.isfunction(value) and not name.startswith("_") and value.__module__ == module:
            namespace[name] = accept_numpy_names(value)
