"""``torch.cpu.amp``: the deprecated spellings of ``torch.amp`` for the CPU (they warn)."""
from ...amp._deprecated import CpuAutocast as autocast
from ...amp._deprecated import CpuGradScaler as GradScaler

__all__ = ["autocast", "GradScaler"]
