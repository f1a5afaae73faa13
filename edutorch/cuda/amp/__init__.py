"""``torch.cuda.amp``: the deprecated spellings of ``torch.amp`` for CUDA (they warn)."""
from ...amp._deprecated import CudaAutocast as autocast
from ...amp._deprecated import CudaGradScaler as GradScaler

__all__ = ["autocast", "GradScaler"]
