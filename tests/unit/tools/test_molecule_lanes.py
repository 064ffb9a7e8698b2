"""tools/molecule_lanes.py: how `make test` splits the molecule scenarios into lanes."""
import glob
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SPEC = importlib.util.spec_from_file_location("molecule_lanes", os.path.join(ROOT, "tools", "molecule_lanes.py"))
ml = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ml)


@pytest.mark.parametrize("scenarios, lanes, seconds, expected", [
    # longest first, each onto the lane that ends soonest
    (["a", "b", "c", "d"], 2, {"a": 10, "b": 7, "c": 5, "d": 4}, [["a", "d"], ["b", "c"]]),
    # one long scenario gets a lane of its own
    (["a", "b", "c"], 2, {"a": 100, "b": 30, "c": 30}, [["a"], ["b", "c"]]),
    # more lanes than scenarios: the rest stay empty
    (["a"], 3, {"a": 5}, [["a"], [], []]),
    # one lane: every scenario, longest first
    (["x", "y"], 1, {"x": 1, "y": 2}, [["y", "x"]]),
    # unknown seconds count as DEFAULT_SECONDS; ties in name order
    (["q", "p"], 2, {}, [["p"], ["q"]]),
    # a name given twice runs once
    (["a", "a"], 2, {"a": 1}, [["a"], []]),
    # a scenario on the newest ansible-core: one unit with the scenario (same node names), in
    # one lane, the scenario first; its seconds are the scenario's until the table has its own
    (["a@newest", "a", "b", "c"], 2, {"a": 10, "b": 12, "c": 9}, [["a", "a@newest"], ["b", "c"]]),
    (["a@newest", "b"], 2, {"a": 10, "b": 12}, [["b"], ["a@newest"]]),
    # ... and its own once a timing table has them
    (["a@newest", "a", "b", "c"], 2, {"a": 10, "a@newest": 1, "b": 12, "c": 9}, [["b"], ["a", "a@newest", "c"]]),
    # unknown scenario and end: DEFAULT_SECONDS each
    (["z@newest", "z", "y"], 2, {}, [["z", "z@newest"], ["y"]]),
])
def test_split(scenarios, lanes, seconds, expected):
    assert ml.split(scenarios, lanes, seconds) == expected


@pytest.mark.parametrize("scenarios, lanes", [
    (["a"], 0),
    (["a b"], 2),
    (["a\nb"], 2),
    (["../x"], 2),
    ([""], 2),
    (["a@oldest"], 2),
    (["a@newest\n"], 2),
    (["a@newest@newest"], 2),
    (["@newest"], 2),
])
def test_bad_input_is_refused(scenarios, lanes):
    with pytest.raises(ValueError):
        ml.split(scenarios, lanes, {})


def test_times_from_a_timing_table(tmp_path):
    table = tmp_path / "test-times.tsv"
    table.write_text("setup\t50\tpassed\t/l/1.log\n"
                     "molecule nvidia_driver\t700\tpassed\t/l/2.log\n"
                     "molecule os_tuning\t90\tFAILED\t/l/3.log\n"
                     "molecule bad name\t10\tpassed\t/l/4.log\n"
                     "molecule nvidia_driver@newest\t650\tpassed\t/l/5.log\n"
                     "wall clock (static stages beside molecule)\t2000\twall\t\n")
    assert ml.times_from(str(table)) == {"nvidia_driver": 700, "nvidia_driver@newest": 650}
    assert ml.times_from(str(tmp_path / "missing.tsv")) == {}
    assert ml.times_from(None) == {}


def test_every_scenario_has_its_seconds():
    """A scenario added without its seconds would be placed by a guess: keep SECONDS in step."""
    scenarios = {os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, "molecule", "*", "molecule.yml"))}
    assert scenarios == set(ml.SECONDS)


def test_command_line_prints_one_line_per_lane():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "molecule_lanes.py"), "--lanes", "2",
                          "nvidia_driver", "volcano", "os_tuning"], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["nvidia_driver", "os_tuning volcano"]
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "molecule_lanes.py"), "--lanes", "0", "x"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "lanes must be 1 or more" in bad.stderr


def test_the_queue_holds_the_units_longest_first_and_each_is_taken_once(tmp_path):
    queue = str(tmp_path / "queue")
    lines = ml.write_queue(queue, ["b", "a@newest", "c", "a"], {"a": 10, "b": 12, "c": 9})
    assert lines == ["a a@newest", "b", "c"]      # a with its end: 20 s, one unit
    assert [ml.take(queue) for _turn in range(4)] == ["a a@newest", "b", "c", ""]
    assert open(queue).read() == ""


def test_lanes_taking_side_by_side_never_take_the_same_unit(tmp_path):
    queue = str(tmp_path / "queue")
    names = ["s%02d" % i for i in range(40)]
    ml.write_queue(queue, names, {})
    script = ("import sys; sys.path.insert(0, %r); import molecule_lanes as ml\n"
              "while True:\n    u = ml.take(%r)\n    if not u: break\n    print(u, flush=True)\n"
              % (os.path.join(ROOT, "tools"), queue))
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _proc in range(4)]
    taken = [line for proc in procs for line in proc.communicate()[0].splitlines()]
    assert sorted(taken) == names


def test_a_queue_line_that_is_not_a_scenario_is_refused(tmp_path):
    queue = tmp_path / "queue"
    queue.write_text("../x\nb\n")
    with pytest.raises(ValueError):
        ml.take(str(queue))


def test_command_line_queue_and_take(tmp_path):
    tool = [sys.executable, os.path.join(ROOT, "tools", "molecule_lanes.py")]
    queue = str(tmp_path / "queue")
    out = subprocess.run(tool + ["--queue", queue, "volcano", "nvidia_driver@newest", "nvidia_driver"],
                         capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["nvidia_driver nvidia_driver@newest", "volcano"]
    taken = [subprocess.run(tool + ["--take", queue], capture_output=True, text=True, check=True).stdout
             for _turn in range(3)]
    assert taken == ["nvidia_driver nvidia_driver@newest\n", "volcano\n", ""]
    bad = subprocess.run(tool + ["--take", queue, "x"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--take FILE takes no scenarios" in bad.stderr
    missing = subprocess.run(tool + ["--take", str(tmp_path / "none")], capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and "No such file" in missing.stderr
