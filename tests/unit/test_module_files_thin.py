# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module file under plugins/modules/ (public and __private) keeps only the module's
interface: DOCUMENTATION, EXAMPLES, RETURN, the argument specification and a small ``main()``
that hands over to plugins/module_utils/<concern>/. Logic lives in module_utils, where the
tests import it directly. A new module file that grows logic fails here (issue 38)."""
import ast
import glob
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODULES = sorted(glob.glob(os.path.join(ROOT, 'plugins', 'modules', '*.py'))
                 + glob.glob(os.path.join(ROOT, 'plugins', 'modules', '__private', '*.py')))
DOCS = {'DOCUMENTATION', 'EXAMPLES', 'RETURN', '__metaclass__'}
# main() without the AnsibleModule(...) call (the argument specification): a handover, no more
MAIN_LINES = 15


def _module_call_lines(function):
    return sum(node.end_lineno - node.lineno + 1 for node in ast.walk(function)
               if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'AnsibleModule')


def _is_main_guard(node):
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and getattr(node.test.left, 'id', '') == '__name__')


def _logic(path):
    """What a module file holds besides its interface: [(line, what)]; and main()'s lines."""
    with open(path) as handle:
        tree = ast.parse(handle.read())
    extra, main = [], None
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_main_guard(node):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue                                            # a docstring
        if isinstance(node, ast.Assign) and all(getattr(t, 'id', '') in DOCS for t in node.targets):
            continue
        if isinstance(node, ast.Assign) and all(getattr(t, 'id', '').endswith(('SPEC', 'OPTIONS'))
                                                for t in node.targets) and isinstance(node.value, (ast.Dict, ast.Call)):
            continue                                            # the argument specification
        if isinstance(node, ast.FunctionDef) and node.name == 'main':
            main = node.end_lineno - node.lineno + 1 - _module_call_lines(node)
            continue
        extra.append((node.lineno, type(node).__name__ + ' ' + getattr(node, 'name', '')))
    return extra, main


def test_every_module_file_is_found():
    names = [os.path.basename(p) for p in MODULES]
    assert 'gpu_facts.py' in names and 'status_file.py' in names and len(names) >= 15


@pytest.mark.parametrize('path', MODULES, ids=[os.path.relpath(p, ROOT) for p in MODULES])
def test_a_module_file_holds_its_interface_only(path):
    extra, main = _logic(path)
    if os.path.basename(path) == '__init__.py':
        return
    assert not extra, ('%s holds logic besides its interface (move it to plugins/module_utils/<concern>/): %s'
                       % (os.path.relpath(path, ROOT), extra))
    assert main is not None, '%s has no main()' % path
    assert main <= MAIN_LINES, ('%s: main() has %d lines besides AnsibleModule(...); hand over to '
                                'plugins/module_utils (at most %d)' % (os.path.relpath(path, ROOT), main, MAIN_LINES))


def test_the_bound_catches_a_fat_module(tmp_path):
    fat = tmp_path / 'fat.py'
    fat.write_text('DOCUMENTATION = ""\n\ndef helper():\n    return 1\n\n\ndef main():\n'
                   + ''.join('    x%d = %d\n' % (i, i) for i in range(MAIN_LINES + 1)))
    extra, main = _logic(str(fat))
    assert extra == [(3, 'FunctionDef helper')] and main == MAIN_LINES + 2
