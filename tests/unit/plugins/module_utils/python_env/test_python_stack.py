"""python_stack decisions (plugins/module_utils/python_env/python_stack.py), from data/python_stack_cases.yml."""
import json
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack as ps

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import cuda_match as cm

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import indexes as ix

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import node_env as ne

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import requirements as rq

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_status as st

HERE = os.path.dirname(os.path.dirname(__file__))
ROLE = os.path.join(HERE, "..", "..", "..", "..", "roles", "python_stack")
with open(os.path.join(HERE, "data", "python_stack_cases.yml")) as _handle:
    CASES = yaml.safe_load(_handle)


def _defaults():
    """The role's defaults, with the tests' plain-HTTP mirror host "m" trusted by name."""
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    return dict(dict((k[len("python_stack_"):], v) for k, v in data.items()), insecure_index_hosts=["m"])


def _context(cuda):
    return {"cuda_version": cuda, "pytorch_index_url": "http://m/pytorch/whl", "pytorch_cuda": "",
            "nvidia_index_url": "https://pypi.nvidia.com", "prefix": "/opt/gpuops/envs", "conda_prefix": "/opt/conda"}


def _ids(name):
    return [c["id"] for c in CASES[name]]


@pytest.mark.parametrize("case", CASES["pytorch_index"], ids=_ids("pytorch_index"))
def test_pytorch_index(case):
    got = cm.pytorch_index(case["cuda"], case["torch"], case.get("override", ""), case.get("driver"),
                           case.get("architectures"))
    assert got["value"] == case["value"], got
    assert case["reason"] in got["reason"], got
    for needle in case.get("error", []):
        assert needle in got.get("error", ""), got
    if not case.get("error"):
        assert "error" not in got, got


def test_table_tags_are_sorted_and_known():
    for row, tags in cm.TORCH_CUDA_TAGS.items():
        assert tags == sorted(tags, key=cm._tag_cuda), row


@pytest.mark.parametrize("case", CASES["problems"], ids=_ids("problems"))
def test_problems(case):
    _env, problems = ps.normalise(case["env"], _defaults())
    assert len(problems) == case["count"], problems
    for needle in case.get("needles", []):
        assert any(needle in p for p in problems), (needle, problems)


def test_names_unique():
    _envs, problems = ps.normalise_all([{"name": "a", "pip": ["x"]}, {"name": "a", "pip": ["y"]}], _defaults())
    assert problems == ["python_stack_environments: the name a is used twice"]


@pytest.mark.parametrize("case", CASES["resolve"], ids=_ids("resolve"))
def test_environments_fill_the_same_defaults_as_normalise(case):
    # python_stack_host's plan reads the entries the registry accepted through environments(): the
    # same environment as normalise() makes, without checking it again
    env, problems = ps.normalise(case["env"], _defaults())
    assert problems == [] and ps.environments([case["env"]], _defaults()) == [env]


def test_not_a_list():
    _envs, problems = ps.normalise_all({"name": "a"}, _defaults())
    assert "must be a list" in problems[0]


@pytest.mark.parametrize("case", CASES["resolve"], ids=_ids("resolve"))
def test_resolve(case):
    env, problems = ps.normalise(case["env"], _defaults())
    assert problems == []
    got = ps.resolve(env, _context(case["cuda"]))
    assert got["spec"]["pip"] == case["packages"]
    assert got["spec"]["extra_index_urls"] == case["extra_index_urls"]
    if "imports" in case:
        assert got["imports"] == case["imports"]
    if "decision" in case:
        assert any(case["decision"] in d["reason"] for d in got["decisions"]), got["decisions"]
    assert got["link"] == "/opt/gpuops/envs/" + env["name"]
    assert got["target"] == "/opt/gpuops/envs/.%s-%s" % (env["name"], got["hash"])


def test_hash_changes_with_spec_and_driver_only():
    env, _problems = ps.normalise({"name": "p", "pip": ["torch==2.9.1", "lmdb"]}, _defaults())
    base = ps.resolve(env, _context("12.8"))["hash"]
    assert ps.resolve(env, _context("12.8"))["hash"] == base
    assert ps.resolve(env, _context("13.0"))["hash"] != base  # another PyTorch index: rebuilt
    env2, _problems = ps.normalise({"name": "p", "pip": ["torch==2.9.1", "lmdb", "tqdm"]}, _defaults())
    assert ps.resolve(env2, _context("12.8"))["hash"] != base
    env3, _problems = ps.normalise({"name": "p", "pip": ["torch==2.9.1", "lmdb"], "verify": False}, _defaults())
    assert ps.resolve(env3, _context("12.8"))["hash"] == base  # verification is not part of the build


def test_conda_spec_renders_channels_python_and_pip():
    env, problems = ps.normalise({"name": "tf", "backend": "conda", "python": "3.10", "conda": ["cudatoolkit=11.8"],
                                  "pip": ["tensorflow==2.20.0"]}, _defaults())
    assert problems == []
    res = ps.resolve(env, _context("12.4"))
    assert res["prefix"] == "/opt/conda/envs"
    doc = json.loads(ps.conda_environment_file(res, "/tmp/req.txt"))
    assert doc["channels"] == ["conda-forge", "nodefaults"]
    assert doc["dependencies"] == ["python=3.10", "cudatoolkit=11.8", "pip", {"pip": ["-r /tmp/req.txt"]}]
    cmd = ps.conda_commands(res, "/opt/conda/bin/conda", "/tmp/env.yml")["commands"]
    assert cmd == [["/opt/conda/bin/conda", "env", "create", "--quiet", "--yes", "--prefix", res["target"],
                    "--file", "/tmp/env.yml"]]


def test_condarc_mirrors():
    doc = json.loads(ps.condarc(["conda-forge"], {"channel_alias": "http://mirror/conda"}, "/var/cache/x", "/opt/conda/envs"))
    assert doc["channels"] == ["conda-forge"]
    assert doc["channel_alias"] == "http://mirror/conda"
    assert doc["pkgs_dirs"] == ["/var/cache/x"] and doc["envs_dirs"] == ["/opt/conda/envs"]
    assert doc["auto_activate_base"] is False


def test_venv_commands_uv_and_pip():
    env, _problems = ps.normalise({"name": "p", "pip": ["numpy"]}, _defaults())
    res = ps.resolve(env, _context(None))
    uv = ps.venv_commands(res, {"python": "/usr/bin/python3.11", "uv": "/opt/uv", "requirements": "/r.txt"})
    assert uv["installer"] == "uv"
    assert uv["commands"][0][:2] == ["/opt/uv", "venv"] and uv["commands"][0][-1] == res["target"]
    assert "/usr/bin/python3.11" in uv["commands"][0]
    assert uv["commands"][1][-3:] == ["-r", "/r.txt", "pip"]  # pip from the environment's indexes
    assert "--seed" not in uv["commands"][0]  # seeding would fetch pip from uv's default index
    pip = ps.venv_commands(res, {"python": "/usr/bin/python3.11", "uv": "", "requirements": "/r.txt"})
    assert pip["installer"] == "pip"
    assert pip["commands"][0] == ["/usr/bin/python3.11", "-m", "venv", res["target"]]
    assert pip["commands"][1][0] == res["target"] + "/bin/python"


def test_requirements_text():
    env, _problems = ps.normalise({"name": "p", "pip": ["torch==2.13.0", "lmdb"], "index_url": "http://m/pypi/simple"}, _defaults())
    text = ps.requirements_text(ps.resolve(env, _context(None))["spec"])
    assert ("--index-url http://m/pypi/simple\n--extra-index-url http://m/pytorch/whl/cpu\n--trusted-host m\n"
            "torch==2.13.0\nlmdb\n") in text


@pytest.mark.parametrize("case", CASES["env_defaults"], ids=_ids("env_defaults"))
def test_env_defaults(case):
    got = dict((d["name"], d["value"]) for d in ne.env_defaults(case["gpu"], case.get("overrides")))
    for name, value in case["expect"].items():
        assert got.get(name) == value, (name, got)
    for item in ne.env_defaults(case["gpu"], case.get("overrides")):
        assert item["reason"]


def test_env_default_problems_and_rendering():
    assert ne.env_default_problems({"BAD-NAME": 1, "OK": "a\nb"}) == [
        "python_stack_env_defaults: 'BAD-NAME' is not an environment variable name",
        "python_stack_env_defaults: OK must be a single-line value, not 'a\\nb'"]
    defaults = ne.env_defaults({"gpu_count": 1, "nics": []}, {"X_FLAGS": "--a b"})
    profile = ne.render_profile(defaults, ["/opt/gpuops/envs/p"], "/opt/conda")
    assert "export X_FLAGS='--a b'\n" in profile
    assert "export CUDA_DEVICE_ORDER=PCI_BUS_ID\n" in profile
    assert ". /opt/conda/etc/profile.d/conda.sh" in profile
    assert "X_FLAGS=--a b\n" in ne.render_env_file(defaults)


@pytest.mark.parametrize("case", CASES["actions"], ids=_ids("actions"))
def test_decide_action(case):
    resolved = {"name": "env", "state": case.get("state", "present"), "hash": "H", "link": "/p/env",
                "target": "/p/.env-H", "adopt": case.get("adopt", False)}
    got = ps.decide_action(resolved, case["observed"])
    assert got["action"] == case["action"], got
    assert case.get("reason", "") in got["reason"]


@pytest.mark.parametrize("case", CASES["aside"], ids=_ids("aside"))
def test_aside_name(case):
    assert ps.aside_name("env", case["existing"]) == case["expect"]


def test_an_environment_left_alone_is_reported_with_its_path():
    env = {"name": "train", "backend": "venv", "state": "present", "python": "3.11", "hash": "H",
           "link": "/opt/gpuops/envs/train", "target": "/opt/gpuops/envs/.train-H",
           "spec": {"pip": [], "conda": [], "index_url": "", "extra_index_urls": []}, "decisions": {},
           "action": "leave", "reason": "environment train: /opt/gpuops/envs/train is a directory ...: left alone"}
    record = st.status({"environments": [env]}, {}, True)["environments"][0]
    assert record["left_alone"] == {"path": "/opt/gpuops/envs/train", "reason": env["reason"]}
    assert record["verification"] == {"ok": None, "summary": "not verified: left alone (/opt/gpuops/envs/train)"}


def test_keep_builds():
    entries = [(".env-aaaaaaaaaaaa", 1, True), (".env-bbbbbbbbbbbb", 2, True), (".env-cccccccccccc", 3, True),
               (".env-dddddddddddd", 4, True), (".env-eeeeeeeeeeee", 5, False), ("env", 6, True),
               (".envx-ffffffffffff", 7, True)]
    assert ps.keep_builds(entries, "env", ".env-dddddddddddd", ".env-dddddddddddd", 1) == [
        ".env-bbbbbbbbbbbb", ".env-aaaaaaaaaaaa"]
    assert ps.keep_builds(entries, "env", ".env-dddddddddddd", ".env-dddddddddddd", 5) == []


@pytest.mark.parametrize("case", CASES["verification"], ids=_ids("verification"))
def test_verification(case):
    ok, problems = st.evaluate_verification(case["result"], {"name": "p"}, case["expect_gpu"])
    assert ok is case["ok"], problems
    for needle in case.get("needles", []):
        assert any(needle in p for p in problems), (needle, problems)


def test_summary_and_stable_record():
    record = {"python": "3.11.2", "imports": {"torch": {"ok": True}}, "seconds": 3.2,
              "torch": {"ok": True, "version": "2.13.0+cpu", "device": "cpu", "dtype": "bfloat16", "step_seconds": 0.1,
                        "loss": 2.3}}
    assert st.summary_line(record) == "torch 2.13.0+cpu CPU (bfloat16 step ok)"
    stable = st.stable_verification(record)
    assert "seconds" not in stable and "step_seconds" not in stable["torch"] and "loss" not in stable["torch"]
    gpu = {"torch": {"ok": True, "version": "2.9.1+cu128", "device": "cuda", "dtype": "float16",
                     "device_names": ["NVIDIA H100 80GB HBM3"]}}
    assert st.summary_line(gpu) == "torch 2.9.1+cu128 CUDA on NVIDIA H100 80GB HBM3 (float16 step ok)"


def test_simple_index_pages():
    page = ix.simple_project_page("torch", [("torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl", "ab" * 32)], "../")
    assert '<a href="../torch-2.13.0%2Bcpu-cp311-cp311-linux_x86_64.whl#sha256=' + "ab" * 32 in page
    assert ix.wheel_project("typing_extensions-4.16.0-py3-none-any.whl") == "typing-extensions"
    assert ix.wheel_project("README") is None
    assert '<a href="lmdb/">lmdb</a>' in ix.simple_root_page(["lmdb"])


def test_status_record_is_stable():
    env, _problems = ps.normalise({"name": "p", "pip": ["numpy"]}, _defaults())
    res = ps.resolve(env, _context(None))
    plan = {"environments": [res], "env_defaults": [], "cuda_version": None, "backends": ["venv"]}
    verified = {"results": [{"item": res, "verification": {"ok": True, "seconds": 1.0, "imports": {}}}]}
    got = st.status(plan, verified, True)
    assert got["environments"][0]["verification"] == {"ok": True, "imports": {}}
    assert "not verified: check mode" in st.status(plan, {}, True)["environments"][0]["verification"]["summary"]


def test_plain_http_indexes_named_are_trusted():
    assert ix.trusted_hosts(["http://172.30.99.1:8099/pypi/simple", "https://pypi.org/simple",
                             "http://user@mirror/x", "http://172.30.99.1:8099/pytorch/whl/cpu"]) == [
        "172.30.99.1:8099", "mirror"]
    assert ix.index_args("") == []
    assert ix.index_args("http://m:1/simple") == ["--index-url", "http://m:1/simple", "--trusted-host", "m:1"]
    env, _problems = ps.normalise({"name": "p", "pip": ["torch==2.13.0"], "index_url": "http://m:1/pypi/simple"},
                                  {"insecure_index_hosts": ["m:1"], "backend": "venv", "python": "3.11"})
    assert _problems == []
    text = ps.requirements_text(ps.resolve(env, _context(None))["spec"])
    assert "--trusted-host m:1\n--trusted-host m\ntorch==2.13.0\n" in text  # the PyTorch index of _context is on m


LOCK = """# This file was autogenerated by uv via the following command:
#    uv pip compile requirements.in --generate-hashes
filelock==3.16.1 \\
    --hash=sha256:aaaa
torch==2.9.1 \\
    --hash=sha256:bbbb \\
    --hash=sha256:cccc
    # via -r requirements.in
--index-url https://ignored
typing-extensions==4.12.2 ; python_version < "3.13"
"""


def test_lock_file_is_installed_as_written_and_matches_the_torch_index():
    assert rq.lock_requirements(LOCK) == ["filelock==3.16.1", "torch==2.9.1", 'typing-extensions==4.12.2 ; python_version < "3.13"']
    env, problems = ps.normalise({"name": "p", "lock_file": "locks/p.txt", "jupyter_kernel": True}, _defaults())
    assert problems == []
    res = ps.resolve(env, dict(_context("12.8"), lock=LOCK))
    assert res["spec"]["pip"] == [] and res["spec"]["lock"] == LOCK
    assert res["spec"]["extra_index_urls"] == ["http://m/pytorch/whl/cu128"]
    assert res["imports"] == ["torch"]
    assert [d["what"] for d in res["decisions"]] == ["lock_file", "pytorch_index"]
    assert LOCK.rstrip("\n") in ps.requirements_text(res["spec"])
    uv = ps.venv_commands(res, {"python": "/usr/bin/python3.11", "uv": "/uv", "requirements": "/r.txt"})
    assert uv["commands"][1][-2:] == ["-r", "/r.txt"]  # nothing unhashed beside a hashed lock
    other = ps.resolve(env, dict(_context("12.8"), lock=LOCK.replace("filelock==3.16.1", "filelock==3.16.2")))
    assert other["hash"] != res["hash"]


def test_lock_file_and_pip_are_exclusive():
    _env, problems = ps.normalise({"name": "p", "lock_file": "x.txt", "pip": ["numpy"]}, _defaults())
    assert problems == ["python_stack_environments[p]: set pip or lock_file, not both (a lock file is the whole "
                        "resolved package set)"]


@pytest.mark.parametrize("change,needle", [
    ({}, None),
    ({"pytorch_cuda": "cu128"}, None),
    ({"pytorch_cuda": "rocm6.4"}, None),
    ({"pytorch_cuda": "12.8"}, "python_stack_pytorch_cuda must be cpu, cuXYZ"),
    ({"uv_sha256": "abc"}, "python_stack_uv_sha256 must be the sha256"),
    ({"installer": "pip", "uv_sha256": ""}, None),
    ({"keep_builds": -1}, "python_stack_keep_builds must be 0 or more"),
    ({"prefix": "envs"}, "python_stack_prefix must be an absolute path"),
    ({"pytorch_index_url": "download.pytorch.org/whl"}, "python_stack_pytorch_index_url must be an http(s)://"),
    # Full matches: a trailing newline is not a URL, a tag, a checksum or a path (issue 19).
    ({"pytorch_index_url": "https://download.pytorch.org/whl\n"}, "python_stack_pytorch_index_url must be"),
    ({"pytorch_cuda": "cu128\n"}, "python_stack_pytorch_cuda must be cpu, cuXYZ"),
    ({"uv_sha256": "d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19\n"},
     "python_stack_uv_sha256 must be the sha256"),
    # python_stack_conda_prefix reaches /etc/profile.d: one absolute line (issue 19).
    ({"conda_prefix": "/opt/conda\ntouch /tmp/pwned"}, "python_stack_conda_prefix must be an absolute path on one line"),
    ({"conda_prefix": "opt/conda"}, "python_stack_conda_prefix must be an absolute path"),
    # Plain-HTTP indexes only where their host is named (issue 19).
    ({"pip_index_url": "http://mirror.example:8080/simple"}, "python_stack_insecure_index_hosts"),
    ({"pip_index_url": "http://mirror.example:8080/simple", "insecure_index_hosts": ["mirror.example:8080"]}, None),
    ({"nvidia_index_url": "http://pypi.nvidia.com"}, "index http://pypi.nvidia.com is plain HTTP"),
    ({"insecure_index_hosts": ["m\n"]}, "python_stack_insecure_index_hosts: 'm\\n' is not a host[:port]"),
])
def test_option_problems(change, needle):
    inputs = _defaults()
    inputs.update(change)
    problems = ps.option_problems(inputs)
    assert problems == [] if needle is None else (len(problems) == 1 and needle in problems[0]), problems


def test_plain_http_index_of_an_environment_is_refused_unless_named():
    env = {"name": "p", "pip": ["numpy"], "index_url": "http://evil.example/simple",
           "extra_index_urls": ["https://pypi.org/simple", "http://m/extra"]}
    _env, problems = ps.normalise(env, _defaults())
    assert problems == ["python_stack_environments[p]: index http://evil.example/simple is plain HTTP: anyone on the "
                        "network path can serve pip (which runs as root) packages; use https, or name evil.example "
                        "in python_stack_insecure_index_hosts to trust it anyway"]
    _env, problems = ps.normalise(env, dict(_defaults(), insecure_index_hosts=["m", "evil.example"]))
    assert problems == []


def test_conda_installer_checksum_is_checked_where_conda_is_used():
    conda_env, _problems = ps.normalise({"name": "c", "backend": "conda", "conda": ["numpy"]}, _defaults())
    venv_env, _problems = ps.normalise({"name": "v", "pip": ["numpy"]}, _defaults())
    inputs = dict(_defaults(), conda_installer_sha256="", conda_installer_url="https://x/Miniforge3.sh")
    problems = ps.option_problems(inputs, [conda_env, venv_env])
    assert problems == ["python_stack_conda_installer_sha256 must be the sha256 (64 hex digits) of "
                        "python_stack_conda_installer_url (https://x/Miniforge3.sh); environments c use the conda "
                        "backend"]
    assert ps.option_problems(inputs, [venv_env]) == []
    assert ps.option_problems(dict(inputs, conda_installer_sha256="ab" * 32 + "\n"), [conda_env]) == problems
    assert ps.option_problems(dict(inputs, conda_installer_sha256="ab" * 32), [conda_env]) == []


@pytest.mark.parametrize("name", ["$(touch {pwned})", "conda dir", "it's", "`touch {pwned}`", "x;touch {pwned}"])
def test_conda_prefix_is_quoted_in_the_profile(name, tmp_path):
    """issue 19: python_stack_conda_prefix went unquoted into /etc/profile.d (ran at every login)."""
    import subprocess
    pwned = tmp_path / "pwned"
    prefix = str(tmp_path / name.format(pwned=pwned))
    hook = os.path.join(prefix, "etc", "profile.d")
    os.makedirs(hook)
    with open(os.path.join(hook, "conda.sh"), "w") as handle:
        handle.write("echo sourced\n")
    profile = ne.render_profile([], [], prefix)
    out = subprocess.run(["/bin/sh", "-c", profile], capture_output=True, text=True, check=True).stdout
    assert out == "sourced\n"
    assert not pwned.exists()


@pytest.mark.parametrize("prefix", ["/opt/conda\ntouch /tmp/pwned", "opt/conda", "/opt/\x1b[31m"])
def test_conda_prefix_that_is_not_one_absolute_line_is_refused(prefix):
    with pytest.raises(ValueError) as err:
        ne.render_profile([], [], prefix)
    assert "python_stack_conda_prefix" in str(err.value)


@pytest.mark.parametrize("text", ["numpy\n", "numpy\nos", "torch==2.9.1\n--index-url http://x",
                                  "lmdb ; python_version < '3.13'\nx"])
def test_requirements_with_a_newline_are_refused(text):
    req, reason = rq.parse_requirement(text)
    assert req is None and repr(text) in reason


@pytest.mark.parametrize("name", ["env\n", "a b", "", "-x"])
def test_environment_names_are_full_matches(name):
    _env, problems = ps.normalise({"name": name, "pip": ["numpy"]}, _defaults())
    assert problems and "needs a name" in problems[0]
