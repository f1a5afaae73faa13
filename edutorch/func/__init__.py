"""``torch.func``: function transforms (JAX-like) over edutorch functions.

    grad(f)(x)                  # df/dx for f returning a scalar
    vmap(f)(xs)                 # f over the first dimension of xs
    jvp(f, (x,), (u,))          # (f(x), J u) by forward mode
    jacrev(f)(x), jacfwd(f)(x), hessian(f)(x)
    functional_call(model, params, (x,))   # a model as a function of its parameters

They compose: ``vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)`` gives
per-sample gradients.  Files as in PyTorch's ``torch/_functorch``:
``_eager_transforms.py`` (grad, grad_and_value, vjp, jacrev, jvp, jacfwd,
linearize, hessian),
``_vmap.py`` (vmap), ``_functional_call.py`` (functional_call,
stack_module_state), ``_pytree.py`` (nests of tensors).

Forward mode (``jvp``, ``jacfwd``, ``linearize``) runs on
``torch.autograd.forward_ad``; ``hessian`` is ``jacfwd(jacrev(f))`` as in PyTorch.
"""
from ._eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._functional_call import functional_call, stack_module_state
from ._vmap import vmap
from ..autograd.gradcheck import register_vmap as _register_vmap

_register_vmap(vmap)  # gradcheck's check_batched_forward_grad vmaps over tangents (autograd imports no func)

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize",
           "stack_module_state", "vjp", "vmap"]


from .._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.func", "edutorch.func")  # out-of-scope names say why
