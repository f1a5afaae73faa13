"""``torch.utils``: data loading (``torch.utils.data``) and helpers."""
from . import data
