# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Target-side Python: every module and every module_utils file a module imports (directly or
through other module_utils) must run on the managed nodes' oldest Python, 3.8.

    python tools/target_python.py            check with vermin (exit 1 on a 3.9+ construct)
    python tools/target_python.py --list     only list the files that run on the target

vermin reads each file and reports the first Python version that runs it; a guarded import of a
newer module (``tomllib``) carries vermin's ``# novm`` comment on its line, with its fallback
beside it. The set of files is found from the modules' imports, so module_utils that only
controller-side plugins use (filters, action plugins) are not held to 3.8.
"""

import argparse
import ast
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PREFIX = "ansible_collections.gpuops.dlserver.plugins.module_utils"
TARGET = "3.8-"
VERMIN_FLAGS = ["--no-tips", "--violations", "--eval-annotations"]


def _module_file(root, dotted):
    """The file of a dotted name under module_utils (a module, or a package's __init__), or None."""
    base = os.path.join(root, "plugins", "module_utils", *dotted.split(".")) if dotted else \
        os.path.join(root, "plugins", "module_utils")
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _imports(root, path):
    """module_utils files that `path` imports."""
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    here = os.path.relpath(os.path.dirname(path), os.path.join(root, "plugins", "module_utils"))
    package = "" if here.startswith("..") or here == "." else here.replace(os.sep, ".")
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                mod = ".".join(parts + ([node.module] if node.module else []))
                names = [mod] + ["%s.%s" % (mod, a.name) if mod else a.name for a in node.names]
                names = [PREFIX + ("." + n if n else "") for n in names]
            elif node.module:
                names = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
        for name in names:
            if name == PREFIX or name.startswith(PREFIX + "."):
                rel = name[len(PREFIX) + 1:]
                # every package on the way is imported too
                parts = rel.split(".") if rel else []
                for i in range(len(parts) + 1):
                    f = _module_file(root, ".".join(parts[:i]))
                    if f:
                        found.add(f)
    return found


def target_files(root=ROOT):
    """plugins/modules/*.py, plugins/modules/__private/*.py and the module_utils they import, transitively."""
    todo = []
    for modules_dir in (os.path.join(root, "plugins", "modules"), os.path.join(root, "plugins", "modules", "__private")):
        if os.path.isdir(modules_dir):
            todo += [os.path.join(modules_dir, f) for f in sorted(os.listdir(modules_dir))
                     if f.endswith(".py") and f != "__init__.py"]
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(sorted(_imports(root, path) - seen))
    return sorted(seen)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--list", action="store_true", help="list the target-side files and stop")
    parser.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--vermin", default=os.path.join(os.path.dirname(sys.executable), "vermin"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    files = target_files(args.root)
    if args.list:
        print("\n".join(os.path.relpath(f, args.root) for f in files))
        return 0
    print("target-python: %d files (modules and the module_utils they import) against Python %s"
          % (len(files), TARGET.rstrip("-")), flush=True)
    res = subprocess.run([args.vermin, "-t=" + TARGET] + VERMIN_FLAGS + files, check=False)
    if res.returncode != 0:
        print("target-python: code above needs a newer Python than the managed nodes' 3.8", file=sys.stderr)
    return 1 if res.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
