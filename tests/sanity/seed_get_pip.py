"""Seed ansible-test's pip bootstrap cache with a script built on ensurepip.

ansible-test bootstraps pip in its virtualenvs with a get-pip script it downloads from a
host this machine cannot reach, and uses a cached copy when one exists. This writes that
copy: it bootstraps pip from the interpreter's bundled wheel, then installs the packages
ansible-test asks for (its pinned pip) from the package index.
"""
import os
import re
import sys

import ansible_test  # noqa: F401  (only to find its version table)

SCRIPT = r'''"""Stand-in for get-pip.py written by gpuops.dlserver tests/sanity/seed_get_pip.py."""
import ensurepip
import os
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
env = dict(os.environ)  # ensurepip blanks pip's configuration in os.environ; keep the user's
ensurepip.bootstrap(upgrade=True)
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args, env=env))
'''


def pip_versions():
    path = os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")
    with open(path) as fh:
        text = fh.read()
    found = set(re.findall(r"pip='([0-9.]+)'", text))
    if not found:
        sys.exit("seed_get_pip: cannot find the pip version ansible-test pins in %s" % path)
    return sorted(found)


def main():
    cache = os.path.expanduser("~/.ansible/test/cache")
    os.makedirs(cache, exist_ok=True)
    for version in pip_versions():
        path = os.path.join(cache, "get_pip_%s.py" % version.replace(".", "_"))
        current = open(path).read() if os.path.exists(path) else None
        if current != SCRIPT:
            with open(path, "w") as fh:
                fh.write(SCRIPT)
            print("seeded %s" % path)


if __name__ == "__main__":
    main()
