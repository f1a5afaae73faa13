"""``nn.Flatten`` and ``nn.Unflatten``: reshape layers."""
from .module import Module


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (by default all but the batch dim)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (the inverse of Flatten)."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type {}".format(
                type(unflattened_size).__name__))
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        from ..._tensor import _wrap_dim

        dim = _wrap_dim(self.dim, input.ndim)
        sizes = list(self.unflattened_size)
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        if -1 in sizes:  # one size may be inferred, as in view()
            sizes[sizes.index(-1)] = input.shape[dim] // known if known else 0
        elif known != input.shape[dim]:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(self.unflattened_size)} don't multiply up to the size "
                f"of dim {self.dim} ({input.shape[dim]}) in the input tensor"
            )
        return input.view(*input.shape[:dim], *sizes, *input.shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
