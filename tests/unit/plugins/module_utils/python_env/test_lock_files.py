# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""python_stack lock files: every entry an exact pin or a hash, naming the file and the line, before
anything is installed (python_env/requirements.py lock_problems; issue 37). Cases: data/lock_file_cases.yml."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack as ps
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import requirements as rq

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "lock_file_cases.yml")
with open(DATA) as _handle:
    CASES = yaml.safe_load(_handle)
WHERE = "python_stack_environments[ml].lock_file locks/ml.txt"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_lock_file(case):
    found = rq.lock_problems(case["text"], WHERE)
    assert len(found) == len(case["problems"]), found
    for problem, (line, words) in zip(found, case["problems"]):
        assert problem.startswith("%s line %d: " % (WHERE, line)), problem
        assert words in problem, (words, problem)
        assert "uv pip compile --generate-hashes" in problem


def test_an_unpinned_lock_file_fails_the_plan_before_anything_is_installed():
    env, problems = ps.normalise({"name": "ml", "lock_file": "locks/ml.txt"}, {"backend": "venv", "python": "3.11"})
    assert problems == []
    context = {"cuda_version": None, "driver_version": None, "architectures": [], "pytorch_index_url": "",
               "pytorch_cuda": "", "nvidia_index_url": "", "prefix": "/opt/gpuops/envs", "conda_prefix": "/opt/conda",
               "lock": "numpy==2.1.3\nscipy>=1.14\n"}
    res = ps.resolve(env, context)
    errors = [d["error"] for d in res["decisions"] if d.get("error")]
    assert errors == [WHERE + " line 2: 'scipy>=1.14' is not an exact pin: version >=1.14 is a range, not one "
                      "version; give an exact pin (name==X or name===X) or its --hash, e.g. regenerate the file with "
                      "uv pip compile --generate-hashes (or pip-compile --generate-hashes)"]
    pinned = ps.resolve(env, dict(context, lock="numpy==2.1.3\nscipy==1.14.1\n"))
    assert [d for d in pinned["decisions"] if d.get("error")] == []
