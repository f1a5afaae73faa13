"""Spectral normalization (``torch.nn.utils.spectral_norm``), the hook-based version.

``W_SN = W / sigma(W)``, where ``sigma`` is the largest singular value of the
weight seen as a matrix (Miyato et al., https://arxiv.org/abs/1802.05957).
``sigma`` is estimated by *power iteration*: two unit vectors ``u`` and ``v``
(buffers ``weight_u``, ``weight_v``) are refined a little at every training
forward pass, and ``sigma ~= u^T W v``.  In eval mode the vectors are frozen.

The original weight lives in the parameter ``weight_orig``; ``weight`` is a
plain attribute recomputed by a forward pre-hook.  Gradients flow to
``weight_orig`` through both ``W`` and ``sigma`` (``u`` and ``v`` are constants).

PyTorch also registers state_dict hooks that upgrade checkpoints written by
PyTorch < 1.0 (which stored ``weight`` instead of ``weight_v``); edutorch never
wrote such checkpoints, so it leaves those hooks out.
"""
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name> = <name>_orig / sigma``."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """Move ``dim`` to the front and flatten the rest: an ``(out, -1)`` matrix."""
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim]
            )
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module, do_power_iteration):
        """``W / (u^T W v)``, after refining ``u`` and ``v`` in place if asked."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # v <- normalize(W^T u), u <- normalize(W v): converges to the top
                    # right/left singular vectors.  Written into the buffers in place.
                    v.copy_(F.normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(weight_mat.mv(v), dim=0, eps=self.eps))
            # clones: a later forward may update the buffers in place again while
            # this forward's graph still needs the values it used
            u, v = u.clone(), v.clone()
        # sigma = u^T W v = sum_ij u_i W_ij v_j, differentiable in W
        sigma = (weight_mat * u.reshape(-1, 1) * v).sum()
        return weight / sigma

    def remove(self, module):
        """Replace the reparametrisation by a parameter ``<name>`` holding ``W / sigma``."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(
            module, self.name, self.compute_weight(module, do_power_iteration=module.training)
        )

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Install spectral normalization on ``module.<name>``; returns the hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            # random unit starting vectors
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # ``weight`` must still exist (code may read it before the first forward),
        # but as a plain tensor, not a parameter: its values without autograd
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Apply spectral normalization to ``module.<name>``; returns the module.

    ``dim`` is the output dimension: 0, or 1 for ``ConvTranspose`` modules.
    """
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def _is_conv_transpose(module):
    """True for ``ConvTranspose1d/2d/3d`` and their subclasses (their weight is (in, out, ...))."""
    names = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
    return any(cls.__name__ in names for cls in type(module).__mro__)


def remove_spectral_norm(module, name="weight"):
    """Remove the spectral normalization of ``module.<name>``; returns the module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
