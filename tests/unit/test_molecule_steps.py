"""tools/molecule_steps.py: the seconds of each molecule step, from molecule's own output."""
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import molecule_steps  # noqa: E402

# Lines as molecule 25 prints them (colours on), with what the fake clock reads at each.
LINES = [
    (0, "\x1b[36mINFO    \x1b[0m \x1b[32mos_tuning\x1b[0m \u279c \x1b[33mdiscovery\x1b[0m: scenario test matrix: destroy,"),
    (1, "\x1b[36mINFO    \x1b[0m \x1b[32mos_tuning\x1b[0m \u279c \x1b[33mdestroy\x1b[0m: \x1b[36mExecuting\x1b[0m"),
    (3, "\x1b[36mINFO    \x1b[0m \x1b[32mos_tuning\x1b[0m \u279c \x1b[33mdestroy\x1b[0m: \x1b[32mExecuted: Successful\x1b[0m"),
    (3, "\x1b[36mINFO    \x1b[0m \x1b[32mos_tuning\x1b[0m \u279c \x1b[33mcreate\x1b[0m: \x1b[36mExecuting\x1b[0m"),
    (17, "  TASK [gpuops.dlserver.os_tuning : converge: Executing the thing]"),   # not molecule's own line
    (20, "INFO     os_tuning \u279c side_effect: Executing"),                    # colours off
    (50, "INFO     os_tuning \u279c side_effect: Executed: Successful"),
]


def test_each_step_from_its_executing_line_to_the_next():
    now = {"t": 0}
    clock = molecule_steps.StepClock(clock=lambda: now["t"])
    for t, text in LINES:
        now["t"] = t
        clock.line(text)
    now["t"] = 62
    assert clock.summary("os_tuning") == "=== steps of os_tuning: destroy 2 s, create 17 s, side_effect 42 s"


def test_no_step_seen():
    assert molecule_steps.StepClock().summary("x") == "=== steps of x: none seen"


def test_passes_the_output_and_the_exit_status_through():
    proc = subprocess.run([sys.executable, os.path.join(REPO, "tools", "molecule_steps.py"), "demo", "sh", "-c",
                           "echo 'INFO     demo \u279c converge: Executing'; echo hello; exit 3"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 3
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["INFO     demo \u279c converge: Executing", "hello"]
    assert lines[2].startswith("=== steps of demo: converge ")
