"""Module tests: exit_json/fail_json raise ExitJson/FailJson (module_harness.py)."""
import pytest

from module_harness import patch_exit


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    patch_exit(monkeypatch)
