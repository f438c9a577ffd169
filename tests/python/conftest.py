"""Shared pytest set-up for the Python package's tests.

Tests that need a CUDA device live in files named test_gpu_*.py (CTest label gpu). Without a
device each of them skips, and the run prints [anatomy-skip] so that CTest reports the test as
skipped rather than passed (tests/CMakeLists.txt).
"""

import pytest

import anatomy


def cuda_available():
    return hasattr(anatomy, "cuda") and anatomy.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="[anatomy-skip] no CUDA device")
    for item in items:
        if item.path.name.startswith("test_gpu_"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    passed = terminalreporter.stats.get("passed", [])
    if skipped and not passed and not cuda_available():
        terminalreporter.write_line("[anatomy-skip] every test here needs a CUDA device")
