"""tools/target_python.py: the `make test` stage that holds target-side code to Python 3.8."""
import importlib.util
import os
import shutil
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SPEC = importlib.util.spec_from_file_location("target_python", os.path.join(ROOT, "tools", "target_python.py"))
tp = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tp)

PREFIX = "ansible_collections.gpuops.dlserver.plugins.module_utils"


def _tree(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def test_the_modules_and_what_they_import_are_checked():
    files = [os.path.relpath(f, ROOT) for f in tp.target_files()]
    assert "plugins/modules/__private/nvidia_container_toolkit_host.py" in files
    assert "plugins/module_utils/engines/container_engines.py" in files
    assert "plugins/module_utils/engines/toml_lite.py" in files, "imported through container_engines"
    assert "plugins/module_utils/engines/__init__.py" in files
    assert not [f for f in files if f.startswith("plugins/filter/") or f.startswith("plugins/action/")]


def test_imports_are_followed_through_module_utils(tmp_path):
    root = _tree(tmp_path, {
        "plugins/modules/m.py": "from %s.a import one\n" % PREFIX,
        "plugins/module_utils/__init__.py": "",
        "plugins/module_utils/a/__init__.py": "",
        "plugins/module_utils/a/one.py": "from %s.b.two import f\nfrom . import three\n" % PREFIX,
        "plugins/module_utils/a/three.py": "",
        "plugins/module_utils/b/__init__.py": "",
        "plugins/module_utils/b/two.py": "def f():\n    return 1\n",
        "plugins/module_utils/c/unused.py": "x = 1\n",
    })
    got = sorted(os.path.relpath(f, root) for f in tp.target_files(root))
    assert got == ["plugins/module_utils/__init__.py", "plugins/module_utils/a/__init__.py",
                   "plugins/module_utils/a/one.py", "plugins/module_utils/a/three.py",
                   "plugins/module_utils/b/__init__.py", "plugins/module_utils/b/two.py", "plugins/modules/m.py"]


VERMIN = shutil.which("vermin") or os.path.join(os.path.dirname(os.sys.executable), "vermin")


@pytest.mark.skipif(not os.path.exists(VERMIN), reason="vermin is in requirements/test.txt")
@pytest.mark.parametrize("code", [
    # vermin knows str members on a str it can see (not on an untyped name)
    "def f():\n    return 'x-1'.removeprefix('x')\n",
    "import tomllib\n",
    "def f(x: list[str]):\n    return x\n",
    "import zoneinfo\n",
    "def f(x):\n    match x:\n        case 1:\n            return 1\n",
    "d = {} | {}\n",
])
def test_the_stage_fails_on_code_newer_than_3_8(tmp_path, code):
    root = _tree(tmp_path, {
        "plugins/modules/m.py": "from %s.u import helper\n" % PREFIX,
        "plugins/module_utils/u/__init__.py": "",
        "plugins/module_utils/u/helper.py": code,
    })
    assert tp.main(["--root", root, "--vermin", VERMIN]) == 1


@pytest.mark.skipif(not os.path.exists(VERMIN), reason="vermin is in requirements/test.txt")
def test_the_stage_passes_38_code_and_a_guarded_import(tmp_path):
    root = _tree(tmp_path, {
        "plugins/modules/m.py": "from %s.u import helper\n" % PREFIX,
        "plugins/module_utils/u/__init__.py": "",
        "plugins/module_utils/u/helper.py": (
            "try:\n    import tomllib  # novm: the fallback below\nexcept ImportError:\n    tomllib = None\n"
            "def f(s):\n    return s[len('x'):] if s.startswith('x') else s\n"),
    })
    assert tp.main(["--root", root, "--vermin", VERMIN]) == 0
