"""Fan the engine op tests out over the op table in ``op_cases.py``."""
from op_cases import COMPARE_CASES, OP_CASES


def pytest_generate_tests(metafunc):
    if "op_case" in metafunc.fixturenames:
        metafunc.parametrize("op_case", OP_CASES, ids=[c.id for c in OP_CASES])
    if "compare_case" in metafunc.fixturenames:
        metafunc.parametrize("compare_case", COMPARE_CASES, ids=[c.id for c in COMPARE_CASES])
