"""``torch.backends.cudnn``: flags only (edutorch has no cuDNN)."""
enabled = True
deterministic = False
benchmark = False


def is_available():
    """False: edutorch's CUDA path is CuPy, without cuDNN kernels."""
    return False
