# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generate docs/vendor-facts.md: every vendor table the collection decides by, row by row, with
each row's source and the date it was read.

The tables stay where they are (plugins/module_utils/); this registry imports them and knows how to
list each (``TABLES``: name, file, what it decides, and a function that returns its rows as
``(key, values, source, read)``). A registered table whose row has no ``source`` or no ``read`` is
an error: the page is not written and ``--check`` fails naming the row. Tables that do not carry
their sources per row yet are named in ``PENDING`` with the reason; the page lists them as such,
so a reader sees what is not auditable yet.

    python3 tools/vendor_facts.py            write docs/vendor-facts.md
    python3 tools/vendor_facts.py --check    exit 1 when the page differs from what it would write,
                                             or when a registered row lacks its source or date (CI)

tests/unit/tools/test_vendor_facts.py runs the check.
"""

from __future__ import print_function

import argparse
import importlib
import os
import re
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
PAGE = os.path.join('docs', 'vendor-facts.md')
_PACKAGE = 'ansible_collections.gpuops.dlserver.plugins.module_utils.'
DATE_RE = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2}')


class VendorFactsError(Exception):
    """A registered table with a row that lacks its source or read date."""


def _module(name):
    collections = os.path.join(REPO, '.cache', 'collections')
    if collections not in sys.path:
        sys.path.insert(0, collections)
    return importlib.import_module(_PACKAGE + name)


def _dict_rows(rows, key, skip=()):
    """Rows that are dicts carrying ``source`` and ``read``; ``key`` names the row."""
    out = []
    for row in rows:
        values = dict((k, v) for k, v in row.items() if k not in ('source', 'read') and k not in skip)
        out.append((key(row), values, row.get('source'), row.get('read')))
    return out


def _keyed_rows(table, key_text, skip=()):
    """``{key: row-dict}`` tables: the key shown with ``key_text``."""
    return [(key_text(k), dict((f, v) for f, v in row.items() if f not in ('source', 'read') and f not in skip),
             row.get('source'), row.get('read')) for k, row in sorted(table.items())]


def _toolkit():
    return _dict_rows(_module('cuda.toolkit').RELEASE_DRIVER_ROWS, lambda r: 'CUDA %s' % r['toolkit'])


def _xid():
    return _keyed_rows(_module('validate.xid').XID_TABLE, lambda k: 'XID %d' % k, skip=('critical',))


def _peaks():
    return _keyed_rows(_module('hardware.gpu_peaks').PEAKS, lambda k: '0x%04x' % k)


def _resnet50():
    return _keyed_rows(_module('hardware.gpu_peaks').RESNET50_TRAINING, lambda k: '0x%04x' % k, skip=('url',))


def _cves():
    return _dict_rows(_module('engines.container_toolkit').VULNERABILITIES, lambda r: r['cve'])


def _volcano():
    return _dict_rows(_module('kubernetes.volcano_tables').COMPATIBILITY_ROWS, lambda r: 'Volcano %s' % r['volcano'])


# name, file, what it decides, rows
TABLES = (
    ('CUDA toolkit -> minimum driver', 'plugins/module_utils/cuda/toolkit.py', 'RELEASE_DRIVER_ROWS',
     'whether the host\'s driver runs each CUDA toolkit the cuda_toolkit role installs, and which driver a '
     'toolkit needs', _toolkit),
    ('XID catalogue', 'plugins/module_utils/validate/xid.py', 'XID_TABLE',
     'what gpu_validate\'s health check reports for an XID in the kernel log, and whether it fails the node',
     _xid),
    ('Datasheet peaks', 'plugins/module_utils/hardware/gpu_peaks.py', 'PEAKS',
     'the dense tensor-core, memory, PCIe and NVLink peaks gpu_validate judges each measured GPU against',
     _peaks),
    ('ResNet-50 reference figures', 'plugins/module_utils/hardware/gpu_peaks.py', 'RESNET50_TRAINING',
     'the published one-GPU ResNet-50 training throughput gpu_validate judges its ResNet-50 step against',
     _resnet50),
    ('NVIDIA Container Toolkit CVEs', 'plugins/module_utils/engines/container_toolkit.py', 'VULNERABILITIES',
     'which installed container toolkit versions nvidia_container_toolkit reports as vulnerable, and the '
     'first fixed version', _cves),
    ('Volcano <-> Kubernetes compatibility', 'plugins/module_utils/kubernetes/volcano_tables.py',
     'COMPATIBILITY_ROWS', 'which Kubernetes minors the volcano role accepts for a Volcano release', _volcano),
)


def _optional(module, attribute):
    """The table ``module.attribute`` where this checkout has it, else None (a table another change adds)."""
    try:
        return getattr(_module(module), attribute, None)
    except ImportError:
        return None


def _torch_builds():
    return _dict_rows(_optional('python_env.torch_builds', 'BUILDS'), lambda r: 'torch %s %s' % (r['torch'], r['tag']))


def _profiling_module():
    return _dict_rows(_optional('monitoring.dcgm_packages', 'PROFILING_MODULE'), lambda r: r['architecture'])


# Tables listed once this checkout has them (issue 36's other changes add them); until then the page
# names them among the tables not listed row by row. Each: (module, attribute, TABLES entry).
OPTIONAL = (
    ('python_env.torch_builds', 'BUILDS',
     ('PyTorch wheel builds -> GPU architectures', 'plugins/module_utils/python_env/torch_builds.py', 'BUILDS',
      'which (torch release, CUDA tag) wheel has kernels for each of the host\'s GPUs (python_stack)', _torch_builds)),
    ('monitoring.dcgm_packages', 'PROFILING_MODULE',
     ('DCGM profiling module per architecture', 'plugins/module_utils/monitoring/dcgm_packages.py', 'PROFILING_MODULE',
      'whether dcgm_exporter installs DCGM\'s closed profiling module for a GPU architecture', _profiling_module)),
)


def registered():
    """TABLES plus the OPTIONAL tables this checkout has."""
    return tuple(TABLES) + tuple(entry for module, attribute, entry in OPTIONAL
                                 if _optional(module, attribute) is not None)


def pending():
    """PENDING plus the OPTIONAL tables this checkout does not have yet."""
    missing = tuple((entry[1], entry[2], entry[3], 'not in this checkout yet (another change of issue 36 adds it)')
                    for module, attribute, entry in OPTIONAL if _optional(module, attribute) is None)
    return tuple(PENDING) + missing


# Tables the collection decides by that do not carry a source and a read date per row yet:
# (file, table, what it decides, why it is not listed row by row).
PENDING = (
    ('plugins/module_utils/python_env/cuda_match.py', 'TORCH_CUDA_TAGS, MINOR_COMPAT_DRIVER',
     'the CUDA tags each torch release ships; the minimum driver of each CUDA major',
     'one SOURCE comment per table (RELEASE.md, CUDA Compatibility guide), no read date per row'),
    ('plugins/module_utils/validate/measure.py', 'precision per GPU',
     'the precision gpu_validate measures each GPU in', 'being converted in another change (issue 36, bf16)'),
    ('plugins/module_utils/monitoring/dcgm.py', 'CUDA_MIN_BRANCH',
     'the first driver branch of each DCGM CUDA-major package', 'no source or read date per row'),
    ('plugins/module_utils/hardware/gpu_models.py', 'KNOWN_GPUS, DRIVER_FLOORS, NVSWITCHES',
     'GPU model, segment, MIG, first driver per PCI device id; NVSwitch ids',
     'sources are named per group of rows in comments and per floor by its README tag; no read date per row'),
    ('plugins/module_utils/hardware/capabilities.py', 'ARCHITECTURES',
     'open or proprietary kernel modules, branch floors and ceilings per architecture',
     'sources are in docs/hardware-gating.md, not in the rows'),
    ('plugins/module_utils/packages/driver_branches.py', 'BRANCHES',
     'the driver branch each source carries per distribution', 'each row says where it comes from; no read date'),
    ('plugins/module_utils/packages/cuda_repos.py', 'REPOSITORIES',
     'NVIDIA CUDA repository directory and signing key per distribution', 'no source or read date per row'),
    ('plugins/module_utils/cuda/toolkit.py', 'DISTRO_TOOLKIT',
     'the CUDA toolkit each distribution ships as nvidia-cuda-toolkit', 'one SOURCE comment for the table'),
)


def _text(value):
    if isinstance(value, (list, tuple)):
        return ', '.join(_text(v) for v in value)
    if isinstance(value, dict):
        return '; '.join('%s: %s' % (k, _text(v)) for k, v in sorted(value.items()))
    text = 'null' if value is None else str(value)
    return text.replace('|', '\\|').replace('\n', ' ')


def table_rows(entry):
    """The rows of a registered table; VendorFactsError names every row without source or read."""
    name, _path, _symbol, _decides, rows = entry
    out = rows()
    problems = []
    for key, _values, source, read in out:
        if not source or not str(source).strip():
            problems.append('%s, row %s: no source' % (name, key))
        if not read or not DATE_RE.fullmatch(str(read)):
            problems.append('%s, row %s: no read date (YYYY-MM-DD), got %r' % (name, key, read))
    if problems:
        raise VendorFactsError('\n'.join(problems))
    return out


def render(tables=None, pending_tables=None):
    tables = registered() if tables is None else tables
    not_listed = pending() if pending_tables is None else pending_tables
    lines = ['# Vendor facts', '',
             '<!-- Generated by tools/vendor_facts.py (make vendor-facts); edit the tables, not this page. -->', '',
             'The vendor tables gpuops.dlserver decides by, row by row: each row with its values, where it was '
             'read and when. Check what the collection believes here before trusting it with a fleet; a row '
             'that is wrong is fixed in the file named, and this page is regenerated (a unit test fails '
             'while it is out of step).', '']
    for entry in tables:
        name, path, symbol, decides, _rows = entry
        rows = table_rows(entry)
        lines += ['## %s' % name, '', '`%s`, `%s`: %s.' % (path, symbol, decides), '',
                  '| row | values | source | read |', '| --- | --- | --- | --- |']
        for key, values, source, read in rows:
            lines.append('| %s | %s | %s | %s |' % (_text(key), _text(values), _text(source), _text(read)))
        lines.append('')
    lines += ['## Not listed row by row yet', '',
              'These tables decide too, but their rows do not carry a source and a read date yet; their '
              'sources are in the file\'s comments.', '',
              '| file | table | decides | why not listed |', '| --- | --- | --- | --- |']
    for path, symbol, decides, why in not_listed:
        lines.append('| `%s` | `%s` | %s | %s |' % (path, symbol, _text(decides), _text(why)))
    lines.append('')
    return '\n'.join(lines)


def main(argv=None, repo=REPO):
    parser = argparse.ArgumentParser(description='Generate docs/vendor-facts.md from the vendor tables.')
    parser.add_argument('--check', action='store_true')
    args = parser.parse_args(argv)
    try:
        text = render()
    except VendorFactsError as exc:
        sys.stderr.write('vendor tables without source or read date:\n%s\n' % exc)
        return 1
    path = os.path.join(repo, PAGE)
    if args.check:
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            sys.stderr.write('%s differs from what tools/vendor_facts.py writes (run `make vendor-facts`)\n' % PAGE)
            return 1
        return 0
    with open(path, 'w') as handle:
        handle.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
