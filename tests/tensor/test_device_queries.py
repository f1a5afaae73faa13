"""``torch.cuda`` / ``torch.accelerator`` / ``torch.backends``: the device checks tutorials start with."""
import pytest

import edutorch as et

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def test_device_selection_idiom_runs():
    device = et.accelerator.current_accelerator().type if et.accelerator.is_available() else "cpu"
    assert device in ("cpu", "cuda")
    assert et.ones(2, device=device).device.type == device
    device = "cuda" if et.cuda.is_available() else "mps" if et.backends.mps.is_available() else "cpu"
    assert device in ("cpu", "cuda")


def test_cuda_answers_agree_with_each_other():
    available = et.cuda.is_available()
    assert et.accelerator.is_available() is available
    assert (et.cuda.device_count() > 0) is available
    assert (et.accelerator.current_accelerator() is None) is (not available)
    et.cuda.manual_seed(0)
    et.cuda.manual_seed_all(0)
    et.cuda.synchronize()


def test_cuda_manual_seed_does_not_touch_the_cpu_stream():
    et.manual_seed(3)
    a = et.rand(4).tolist()
    et.manual_seed(3)
    et.cuda.manual_seed(99)
    assert et.rand(4).tolist() == a


def test_cudnn_flags_can_be_set():
    old = et.backends.cudnn.deterministic, et.backends.cudnn.benchmark
    try:
        et.backends.cudnn.deterministic = True
        et.backends.cudnn.benchmark = False
        assert et.backends.cudnn.deterministic is True
    finally:
        et.backends.cudnn.deterministic, et.backends.cudnn.benchmark = old
    assert et.backends.mps.is_available() is False and et.backends.mps.is_built() is False


def test_cpu_only_answers_match_torch_on_a_cpu_machine():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    if torch.cuda.is_available() or et.cuda.is_available():
        pytest.skip("a GPU is present: the CPU-only answers do not apply")
    assert et.cuda.is_available() is torch.cuda.is_available() is False
    assert et.cuda.device_count() == torch.cuda.device_count() == 0
    assert et.accelerator.is_available() is torch.accelerator.is_available()
    assert et.accelerator.current_accelerator() is torch.accelerator.current_accelerator() is None
