# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generate docs/vendor-facts.md: every vendor table the collection decides by, row by row, with
each row's source and the date it was read.

The tables stay where they are (plugins/module_utils/); this registry imports them and knows how to
list each (``TABLES``: name, file, what it decides, and a function that returns its rows as
``(key, values, source, read)``). A registered table whose row has no ``source`` or no ``read`` is
an error: the page is not written and ``--check`` fails naming the row. Tables that do not carry
their sources per row yet would be named in ``PENDING`` with the reason (the page lists them as such;
none is left). ``unregistered_tables()`` finds every module-level table of plugins/module_utils whose
rows carry a ``source`` or ``read`` and that nobody registered (a unit test keeps it empty). The page
ends with the Ubuntu package names of tests/fixtures/ubuntu-index/, each with its verdict: checked
against Ubuntu's published index, run on a node in CI (Debian's package of that name), or neither.

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


def _recovery_codes():
    return _keyed_rows(_module('validate.xid').RECOVERY_CODES, lambda k: 'code %d' % k)


def _profiling_module_sources():
    return _dict_rows(_module('monitoring.dcgm_packages').PROFILING_MODULE_SOURCES, lambda r: r['source'].split(' (')[0])


def _torch_tags():
    return _dict_rows(_module('python_env.cuda_match').TORCH_CUDA_TAG_ROWS, lambda r: 'torch %s' % r['torch'])


def _minor_compat():
    return _dict_rows(_module('python_env.cuda_match').MINOR_COMPAT_ROWS, lambda r: 'CUDA %d.x' % r['cuda_major'])


def _dcgm_cuda_branch():
    return _dict_rows(_module('monitoring.dcgm').CUDA_MIN_BRANCH_ROWS, lambda r: 'CUDA %s' % r['cuda_major'])


def _precision():
    return _dict_rows(_module('hardware.precision').NATIVE_PRECISION, lambda r: r['architecture'])


def _known_gpus():
    return _keyed_rows(_module('hardware.gpu_models').KNOWN_GPUS, lambda k: '0x%04x' % k)


def _driver_floors():
    return _keyed_rows(_module('hardware.gpu_models').DRIVER_FLOORS, lambda k: '0x%04x' % k)


def _nvswitches():
    return _keyed_rows(_module('hardware.gpu_models').NVSWITCHES, lambda k: '0x%04x' % k)


def _architectures():
    table = _module('hardware.capabilities').ARCHITECTURES
    rows = [dict(row, architecture=name) for name, row in sorted(table.items(), key=lambda item: item[1]['order'])]
    return _dict_rows(rows, lambda r: r['architecture'], skip=('architecture',))


def _driver_branches():
    return _dict_rows(_module('packages.driver_branches').BRANCH_ROWS,
                      lambda r: '%s %s, %s' % (r['platform'][0], r['platform'][1], r['driver_source']))


def _cuda_repos():
    return _keyed_rows(_module('packages.cuda_repos').REPOSITORIES, lambda k: '%s %s' % k)


def _distro_toolkit():
    return _dict_rows(_module('cuda.toolkit').DISTRO_TOOLKIT_ROWS, lambda r: '%s %s' % (r['distribution'], r['major']))


def _tf_and_cuda():
    return _dict_rows(_module('python_env.cuda_match').TF_AND_CUDA_ROWS, lambda r: 'tensorflow >= %s' % r['tensorflow'])


def _dali_flavours():
    return _dict_rows(_module('python_env.cuda_match').DALI_FLAVOUR_ROWS, lambda r: r['flavour'])


def _toolkit_packages():
    return _dict_rows(_module('cuda.toolkit').TOOLKIT_PACKAGE_ROWS, lambda r: r['what'])


def _cudnn_packages():
    return _dict_rows(_module('cuda.toolkit').CUDNN_PACKAGE_ROWS, lambda r: 'CUDA %d' % r['cuda_major'])


def _nccl_packages():
    return _dict_rows(_module('cuda.toolkit').NCCL_PACKAGE_ROWS, lambda r: r['package'])


def _chip_arch():
    return _dict_rows(_module('hardware.gpu_models').CHIP_ARCH_ROWS, lambda r: r['prefix'], skip=('prefix',))


def _cc_arch():
    return _dict_rows(_module('hardware.gpu_models').CC_ARCH_ROWS, lambda r: 'compute capability %s' % r['capability'],
                      skip=('capability',))


def _mig_chips():
    return _dict_rows(_module('hardware.gpu_models').MIG_CHIP_ROWS, lambda r: r['chip'])


def _arch_capabilities():
    return _dict_rows(_module('python_env.torch_builds').ARCH_CAPABILITY_ROWS, lambda r: r['architecture'],
                      skip=('architecture',))


# name, file, what it decides, rows
TABLES = (
    ('CUDA toolkit -> minimum driver', 'plugins/module_utils/cuda/toolkit.py', 'RELEASE_DRIVER_ROWS',
     'whether the host\'s driver runs each CUDA toolkit the cuda_toolkit role installs, and which driver a '
     'toolkit needs', _toolkit),
    ('XID catalogue', 'plugins/module_utils/validate/xid.py', 'XID_TABLE',
     'what gpu_validate\'s health check reports for an XID in the kernel log, and whether it fails the node',
     _xid),
    ('Driver GPU recovery actions', 'plugins/module_utils/validate/xid.py', 'RECOVERY_CODES',
     'what gpu_validate\'s health check does with the recovery action the driver states for a GPU (fail, or '
     'warn)', _recovery_codes),
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
    ('PyTorch release -> CUDA tags', 'plugins/module_utils/python_env/cuda_match.py', 'TORCH_CUDA_TAG_ROWS',
     'the CUDA tags (wheel indexes) each torch minor release ships, which python_stack chooses among', _torch_tags),
    ('CUDA minor-version compatibility', 'plugins/module_utils/python_env/cuda_match.py', 'MINOR_COMPAT_ROWS',
     'the oldest driver that runs every build of a CUDA major (python_stack\'s wheel tag, cuda_toolkit\'s '
     'compatible toolkits)', _minor_compat),
    ('DCGM CUDA-major packages -> driver branch', 'plugins/module_utils/monitoring/dcgm.py', 'CUDA_MIN_BRANCH_ROWS',
     'which datacenter-gpu-manager-4-cuda<major> dcgm_exporter installs for a driver branch', _dcgm_cuda_branch),
    ('Native precision per architecture', 'plugins/module_utils/hardware/precision.py', 'NATIVE_PRECISION',
     'the precision (bfloat16 or float16) gpu_validate measures each GPU in and judges it by', _precision),
    ('GPU models by PCI device id', 'plugins/module_utils/hardware/gpu_models.py', 'KNOWN_GPUS',
     'name, chip (so architecture), segment, MIG, memory and kernel-module facts of a GPU the probe finds; the '
     'sources: hardware/gpu_model_sources.py', _known_gpus),
    ('Driver floor per PCI device id', 'plugins/module_utils/hardware/gpu_models.py', 'DRIVER_FLOORS',
     'the first driver the plan accepts for a GPU (nvidia_driver refuses an older one)', _driver_floors),
    ('NVSwitch PCI ids', 'plugins/module_utils/hardware/gpu_models.py', 'NVSWITCHES',
     'which PCI functions are NVSwitches (Fabric Manager required) and their generation (NVLSM)', _nvswitches),
    ('GPU architectures', 'plugins/module_utils/hardware/capabilities.py', 'ARCHITECTURES',
     'open or proprietary kernel modules, and the driver branch floor and ceiling, per architecture', _architectures),
    ('Driver branches per platform and source', 'plugins/module_utils/packages/driver_branches.py', 'BRANCH_ROWS',
     'the driver branch nvidia_driver installs where nothing else decides it, per distribution and driver source',
     _driver_branches),
    ('NVIDIA CUDA repository per distribution', 'plugins/module_utils/packages/cuda_repos.py', 'REPOSITORIES',
     'the CUDA repository directory and signing key nvidia_driver, cuda_toolkit and dcgm_exporter trust',
     _cuda_repos),
    ('Distribution CUDA toolkit', 'plugins/module_utils/cuda/toolkit.py', 'DISTRO_TOOLKIT_ROWS',
     'the CUDA toolkit each distribution ships as nvidia-cuda-toolkit (cuda_toolkit\'s distro source)',
     _distro_toolkit),
    ('TensorFlow and-cuda extra', 'plugins/module_utils/python_env/cuda_match.py', 'TF_AND_CUDA_ROWS',
     'whether python_stack asks for tensorflow[and-cuda] (NVIDIA\'s CUDA wheels) or leaves TensorFlow CPU-only',
     _tf_and_cuda),
    ('DALI wheel flavours', 'plugins/module_utils/python_env/cuda_match.py', 'DALI_FLAVOUR_ROWS',
     'which nvidia-dali-cuda<flavour> (and tf-plugin) wheel python_stack installs for the driver\'s CUDA',
     _dali_flavours),
    ('CUDA toolkit and Nsight package names', 'plugins/module_utils/cuda/toolkit.py', 'TOOLKIT_PACKAGE_ROWS',
     'the package names (X-Y: the toolkit version) cuda_toolkit installs from NVIDIA\'s CUDA repository',
     _toolkit_packages),
    ('cuDNN package per CUDA major', 'plugins/module_utils/cuda/toolkit.py', 'CUDNN_PACKAGE_ROWS',
     'the cuDNN 9 development package cuda_toolkit installs with a toolkit of that CUDA major', _cudnn_packages),
    ('NCCL packages', 'plugins/module_utils/cuda/toolkit.py', 'NCCL_PACKAGE_ROWS',
     'the NCCL packages cuda_toolkit installs (one build per host, by exact version: cuda/nccl.py)', _nccl_packages),
    ('GPU chip code name -> architecture', 'plugins/module_utils/hardware/gpu_models.py', 'CHIP_ARCH_ROWS',
     'the architecture the probe reports for a GPU from its chip code name (pci.ids or KNOWN_GPUS)', _chip_arch),
    ('Compute capability -> architecture', 'plugins/module_utils/hardware/gpu_models.py', 'CC_ARCH_ROWS',
     'the architecture the probe reports for a GPU from its compute capability (ids no table knows)', _cc_arch),
    ('MIG-capable chips', 'plugins/module_utils/hardware/gpu_models.py', 'MIG_CHIP_ROWS',
     'whether the probe reports a data-centre GPU that KNOWN_GPUS lacks as MIG-capable, by its chip', _mig_chips),
    ('Architecture -> compute capabilities', 'plugins/module_utils/python_env/torch_builds.py', 'ARCH_CAPABILITY_ROWS',
     'the compute capabilities python_stack checks a wheel build against for a GPU known only by its architecture',
     _arch_capabilities),
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
    ('monitoring.dcgm_packages', 'PROFILING_MODULE_SOURCES',
     ('DCGM profiling module: what was read', 'plugins/module_utils/monitoring/dcgm_packages.py',
      'PROFILING_MODULE_SOURCES', 'the published statements PROFILING_MODULE rows rest on', _profiling_module_sources)),
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
# (file, table, what it decides, why it is not listed row by row). Empty: every table is listed
# (unregistered_tables() finds a sourced table nobody registered; a unit test keeps both empty).
PENDING = ()


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
    if not_listed:
        lines += ['## Not listed row by row yet', '',
                  'These tables decide too, but their rows do not carry a source and a read date yet; their '
                  'sources are in the file\'s comments.', '',
                  '| file | table | decides | why not listed |', '| --- | --- | --- | --- |']
        for path, symbol, decides, why in not_listed:
            lines.append('| `%s` | `%s` | %s | %s |' % (path, symbol, _text(decides), _text(why)))
        lines.append('')
    lines += ubuntu_section()
    return '\n'.join(lines)


def _table_rows_of(value):
    """The rows of a module-level container: a list/tuple of dicts or a dict of dicts, else None."""
    if isinstance(value, dict):
        rows = list(value.values())
    elif isinstance(value, (list, tuple)):
        rows = list(value)
    else:
        return None
    return rows if rows and all(isinstance(row, dict) for row in rows) else None


def _dotted(path):
    """'plugins/module_utils/cuda/toolkit.py' -> 'cuda.toolkit'."""
    return path[len('plugins/module_utils/'):-len('.py')].replace('/', '.')


def unregistered_tables(root=None, registered_tables=None):
    """(file, NAME) of every module-level table in plugins/module_utils whose rows carry a ``source`` or a
    ``read`` and that is not registered: a sourced table the page would silently leave out."""
    root = os.path.join(REPO, 'plugins', 'module_utils') if root is None else root
    entries = registered() if registered_tables is None else registered_tables
    known = set((entry[1], entry[2]) for entry in entries)
    # a registered table imported under its own name elsewhere (plan/driver.py's ARCHITECTURES) is the same object
    same = set(id(getattr(_module(_dotted(entry[1])), entry[2], None)) for entry in entries)
    found = []
    for folder, _dirs, files in sorted(os.walk(root)):
        for filename in sorted(files):
            if not filename.endswith('.py') or filename == '__init__.py':
                continue
            relative = os.path.relpath(os.path.join(folder, filename), REPO).replace(os.sep, '/')
            name = os.path.relpath(os.path.join(folder, filename[:-3]), os.path.join(REPO, 'plugins', 'module_utils'))
            module = _module(name.replace(os.sep, '.'))
            for attribute in sorted(vars(module)):
                if not re.fullmatch(r'[A-Z][A-Z0-9_]*', attribute):
                    continue
                value = getattr(module, attribute)
                if (relative, attribute) in known or id(value) in same:
                    continue
                rows = _table_rows_of(value)
                if rows and any('source' in row or 'read' in row for row in rows):
                    found.append((relative, attribute))
    return found


# Ubuntu package names: where each claim stands. The evidence files (tests/fixtures/ubuntu-index/, format in
# its README.md) are read as they are; CI_ON_DEBIAN names the names whose Debian package of the same name a
# molecule scenario installs on a Debian 12/13 lab node, each with the file (and text) that shows it
# (tests/unit/tools/test_vendor_facts.py checks the text is there).
UBUNTU_INDEX = os.path.join('tests', 'fixtures', 'ubuntu-index')
UBUNTU_RELEASES = (('22.04', 'jammy'), ('24.04', 'noble'))
_UBUNTU_LINE = re.compile(r'(?P<name>[a-z0-9][a-z0-9.+*-]*) \| (?P<evidence>listed|related|none|nvidia) \| '
                          r'SOURCE: (?P<source>.+?), read (?P<read>[0-9]{4}-[0-9]{2}-[0-9]{2}): "(?P<quote>[^"]*)"(?P<note>.*)')
CI_ON_DEBIAN = {
    'prometheus-node-exporter': ('molecule/monitoring/tests/test_default.py', 'prometheus-node-exporter',
                                 'molecule monitoring (Debian 13 node mon-pkg)'),
    'prometheus': ('molecule/monitoring/molecule.yml', 'prometheus', 'molecule monitoring (Debian\'s Prometheus)'),
    'python3-venv': ('molecule/python_stack/tests/test_default.py', 'python3-venv', 'molecule python_stack'),
    'python3-pip': ('roles/python_stack/vars/Debian.yml', 'python3-pip',
                    'molecule python_stack (the Debian vars install it; verify does not assert it)'),
    'nvidia-cuda-toolkit': ('molecule/cuda_toolkit_distro/tests/test_default.py', 'nvidia-cuda-toolkit',
                            'molecule cuda_toolkit_distro'),
    'nvidia-cuda-toolkit-gcc': ('molecule/cuda_toolkit_distro/tests/test_default.py', 'nvidia-cuda-toolkit-gcc',
                                'molecule cuda_toolkit_distro'),
}
_EVIDENCE = {
    'listed': 'checked against Ubuntu\'s published index: a published apt listing of a {code} host names it '
              '(fixture `tests/fixtures/ubuntu-index/{code}.txt`)',
    'related': 'related only: the Ubuntu source package that builds it is seen in {code}, not the name itself '
               '(fixture `tests/fixtures/ubuntu-index/{code}.txt`)',
    'none': 'not checked: no published evidence found (fixture `tests/fixtures/ubuntu-index/{code}.txt` says where '
            'it was looked for)',
}


def ubuntu_claims(repo=REPO):
    """[(release, name, evidence, source, read, ci)] of every name the fixtures list for Ubuntu's archive."""
    out = []
    for release, code in UBUNTU_RELEASES:
        with open(os.path.join(repo, UBUNTU_INDEX, code + '.txt')) as handle:
            for line in handle:
                line = line.rstrip('\n')
                if not line.strip() or line.startswith('#'):
                    continue
                match = _UBUNTU_LINE.fullmatch(line)
                if not match:
                    raise VendorFactsError('%s/%s.txt: not an entry: %r' % (UBUNTU_INDEX, code, line))
                entry = match.groupdict()
                ci = CI_ON_DEBIAN.get(entry['name'])
                out.append((release, entry['name'], entry['evidence'], entry['source'], entry['read'],
                            ci[2] if ci else None))
    return out


def ubuntu_verdict(evidence, ci):
    """One of the three words the support matrix (docs/support-matrix.md) uses for a name."""
    checked = evidence == 'listed'
    if checked and ci:
        return 'checked against Ubuntu\'s index; the Debian package of that name run on a node in CI'
    if checked:
        return 'checked against Ubuntu\'s index'
    if ci:
        return 'run on a node in CI (Debian\'s package of that name), not checked against Ubuntu\'s index'
    return 'neither'


def ubuntu_section():
    lines = ['## Ubuntu package names', '',
             'No Ubuntu node runs in CI. Each name the roles install from Ubuntu\'s own archive on 22.04 and 24.04 '
             'is either checked against Ubuntu\'s published index (a published apt listing of a host of that '
             'release, kept as a fixture with its SOURCE), or run on a node in CI (the Debian package of the same '
             'name, installed by a molecule scenario on a Debian 12/13 lab node: the name resolves there, not on '
             'Ubuntu), or neither. The names taken from NVIDIA\'s repositories are in '
             '`tests/fixtures/ubuntu-index/nvidia-repo.txt` (not Ubuntu\'s index; CI serves test doubles of them).',
             '', '| Ubuntu | name | verdict | evidence | run on a node in CI | read |',
             '| --- | --- | --- | --- | --- | --- |']
    for release, name, evidence, _source, read, ci in ubuntu_claims():
        code = dict(UBUNTU_RELEASES)[release]
        lines.append('| %s | `%s` | %s | %s | %s | %s |' % (
            release, name, ubuntu_verdict(evidence, ci), _EVIDENCE[evidence].format(code=code), ci or 'no', read))
    lines.append('')
    return lines


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
