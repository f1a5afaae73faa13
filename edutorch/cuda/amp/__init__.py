"""``torch.cuda.amp``: the deprecated spellings of ``torch.amp`` for CUDA (they warn)."""
from ...amp._deprecated import CudaAutocast as autocast
from ...amp._deprecated import CudaGradScaler as GradScaler
from ...amp._deprecated import cuda_custom_bwd as custom_bwd
from ...amp._deprecated import cuda_custom_fwd as custom_fwd

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler"]
