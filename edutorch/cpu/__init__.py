"""``torch.cpu``: here only its ``amp`` namespace (deprecated spellings of ``torch.amp``)."""
from . import amp
