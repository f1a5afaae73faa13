"""What every lesson's check tests assert: a right answer is ``✓ correct``, a wrong one is
``✗ not yet`` with a hint that names the mistake (never a traceback)."""


def assert_ok(result):
    assert result.ok, repr(result)
    assert repr(result).startswith("✓ correct")


def assert_hint(result, *words):
    assert not result.ok, repr(result)
    text = repr(result)
    assert text.startswith("✗ not yet") and "Traceback" not in text
    for word in words:
        assert word in text, text
