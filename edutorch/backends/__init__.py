"""``torch.backends``: the switches tutorials set for reproducibility.

edutorch has no cuDNN or MPS backend: ``torch.backends.mps.is_available()`` is
False, and the cuDNN flags (``deterministic``, ``benchmark``, ``enabled``) are
plain attributes that may be set and change nothing (NumPy is deterministic).
"""
from . import cudnn, mps  # noqa: F401
