"""``torch.utils``: data loading (``torch.utils.data``), gradient checkpointing, hooks."""
from . import checkpoint, data
