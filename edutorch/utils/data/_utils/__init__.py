"""Helpers of ``torch.utils.data`` (collation)."""
from . import collate
