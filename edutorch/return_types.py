"""``torch.return_types``: the named tuples that ``max(dim)``, ``min(dim)``... return.

``values, indices = x.max(1)`` unpacks like a tuple; ``x.max(1).values``
reads by name.
"""


class _ValuesIndices(tuple):
    """A ``(values, indices)`` pair printed the way PyTorch prints it."""

    __slots__ = ()
    n_fields = 2
    n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\nindices={self[1]!r})"


class max(_ValuesIndices):
    __slots__ = ()


class min(_ValuesIndices):
    __slots__ = ()


class _Named(tuple):
    """A tuple whose fields also have names (``_fields``), printed as PyTorch prints them."""

    __slots__ = ()
    _fields = ()

    def __repr__(self):
        items = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{items})"


class linalg_svd(_Named):
    """``U, S, Vh = torch.linalg.svd(A)``."""

    __slots__ = ()
    _fields = ("U", "S", "Vh")
    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    Vh = property(lambda self: self[2])


class linalg_qr(_Named):
    """``Q, R = torch.linalg.qr(A)``."""

    __slots__ = ()
    _fields = ("Q", "R")
    Q = property(lambda self: self[0])
    R = property(lambda self: self[1])


class geqrf(_Named):
    """``a, tau = torch.geqrf(A)``."""

    __slots__ = ()
    _fields = ("a", "tau")
    a = property(lambda self: self[0])
    tau = property(lambda self: self[1])


class sort(_ValuesIndices):
    __slots__ = ()


class topk(_ValuesIndices):
    __slots__ = ()


class median(_ValuesIndices):
    __slots__ = ()


class linalg_eigh(_Named):
    """``L, Q = torch.linalg.eigh(A)``."""

    __slots__ = ()
    _fields = ("eigenvalues", "eigenvectors")
    eigenvalues = property(lambda self: self[0])
    eigenvectors = property(lambda self: self[1])


class kthvalue(_ValuesIndices):
    __slots__ = ()


class cummax(_ValuesIndices):
    __slots__ = ()


class cummin(_ValuesIndices):
    __slots__ = ()


class svd(_Named):
    """``U, S, V = torch.svd(A)`` (``V``, not ``Vh``: the older API)."""

    __slots__ = ()
    _fields = ("U", "S", "V")
    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    V = property(lambda self: self[2])


class aminmax(_Named):
    """``lo, hi = torch.aminmax(x)``."""

    __slots__ = ()
    _fields = ("min", "max")
    min = property(lambda self: self[0])
    max = property(lambda self: self[1])


class linalg_slogdet(_Named):
    """``sign, logabsdet = torch.linalg.slogdet(A)``."""

    __slots__ = ()
    _fields = ("sign", "logabsdet")
    sign = property(lambda self: self[0])
    logabsdet = property(lambda self: self[1])


slogdet = linalg_slogdet
