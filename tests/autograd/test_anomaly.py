"""``detect_anomaly``: a NaN made in backward names the op and shows the forward line."""
import warnings

import pytest

import edutorch as et

REASON = "real PyTorch not installed: parity test skipped"


def nan_backward_error(lib):
    """0/0 in forward is NaN; DivBackward0 then returns NaN for its 2nd input."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            y = x / x  # THE FORWARD LINE
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
    return str(info.value), [str(w.message) for w in caught]


def test_nan_in_backward_message_matches_pytorch():
    torch = pytest.importorskip("torch", reason=REASON)
    mine, theirs = nan_backward_error(et), nan_backward_error(torch)
    assert mine[0] == theirs[0] == "Function 'DivBackward0' returned nan values in its 1th output."


def test_warning_shows_forward_traceback():
    message, caught = nan_backward_error(et)
    assert "Anomaly Detection has been enabled." in caught[0]
    detail = [m for m in caught if m.startswith("Error detected in DivBackward0.")]
    assert len(detail) == 1
    assert "Traceback of forward call that caused the error:" in detail[0]
    assert "y = x / x  # THE FORWARD LINE" in detail[0]
    assert "edutorch/autograd" not in detail[0]  # the op plumbing is trimmed


def test_no_check_without_anomaly_mode():
    x = et.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x / x).sum().backward()  # NaN gradient, but no error outside anomaly mode
    assert x.grad.tolist()[1] == 0.0


def test_check_nan_false_allows_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with et.autograd.detect_anomaly(check_nan=False):
            x = et.tensor([0.0, 1.0], requires_grad=True)
            (x / x).sum().backward()
    assert x.grad is not None


def test_exception_in_custom_backward_warns_with_forward_line():
    class Broken(et.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with et.autograd.detect_anomaly():
            y = Broken.apply(et.ones(2, requires_grad=True))  # BROKEN FORWARD
            with pytest.raises(ValueError, match="boom in backward"):
                y.sum().backward()
    details = [str(w.message) for w in caught if "Error detected in BrokenBackward" in str(w.message)]
    assert len(details) == 1 and "BROKEN FORWARD" in details[0]


def test_set_detect_anomaly_call_and_context_restore():
    assert not et.autograd.is_anomaly_enabled()
    with et.autograd.set_detect_anomaly(True, check_nan=False):
        assert et.autograd.is_anomaly_enabled()
        assert not et.autograd.is_anomaly_check_nan_enabled()
    assert not et.autograd.is_anomaly_enabled()
    et.autograd.set_detect_anomaly(True)
    try:
        node = (et.ones(1, requires_grad=True) * 2).grad_fn
        assert "traceback_" in node.metadata
    finally:
        et.autograd.set_detect_anomaly(False)
    node = (et.ones(1, requires_grad=True) * 2).grad_fn
    assert "traceback_" not in node.metadata


def test_detect_anomaly_as_decorator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @et.autograd.detect_anomaly()
        def inside():
            return et.autograd.is_anomaly_enabled()

    assert inside() is True
    assert et.autograd.is_anomaly_enabled() is False


def _anomaly_states(lib):
    """What ``is_anomaly_enabled`` / ``is_anomaly_check_nan_enabled`` report as the mode changes."""
    states = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # detect_anomaly's "has been enabled" warning
        with lib.autograd.detect_anomaly(check_nan=False):
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    with lib.autograd.set_detect_anomaly(True):
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    lib.set_anomaly_enabled(True, False)
    states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    lib.set_anomaly_enabled(False)
    states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    return states


def test_anomaly_state_functions_match_torch():
    torch = pytest.importorskip("torch", reason=REASON)
    ours = _anomaly_states(et)
    assert ours == _anomaly_states(torch)
    assert ours == [(False, True), (True, False), (False, True), (True, True), (True, False), (False, True)]
    # edutorch also offers them in autograd (where they are defined)
    assert et.autograd.is_anomaly_enabled is et.is_anomaly_enabled
    assert et.autograd.is_anomaly_check_nan_enabled is et.is_anomaly_check_nan_enabled
