# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generate docs/vendor-facts.md: every vendor table the collection decides by, row by row, with
each row's source and the date it was read.

The tables stay where they are (plugins/module_utils/); this registry imports them and knows how to
list each (``TABLES``: name, file, what it decides, and a function that returns its rows as
``(key, values, source, read)``). A registered table whose row has no ``source`` or no ``read`` is
an error: the page is not written and ``--check`` fails naming the row. Vendor tables that do
not carry their sources per row yet are named in ``PENDING`` with the reason (the page lists them as
such). ``unregistered_tables()`` finds every module-level table of plugins/module_utils whose rows carry
a ``source`` or ``read`` and that nobody registered; ``unclassified_tables()`` finds every module-level
table (dict, list, tuple, set) that is neither registered, nor ``DERIVED`` from a registered one, nor
``PENDING``, nor ``NOT_VENDOR`` (with its reason): a vendor table nobody judged. Unit tests keep both
empty. The page
ends with the Ubuntu package names of tests/fixtures/ubuntu-index/, each with its verdict: checked
against Ubuntu's published index, run on a node in CI (Debian's package of that name), or neither.

    python3 tools/vendor_facts.py            write docs/vendor-facts.md
    python3 tools/vendor_facts.py --check    exit 1 when the page differs from what it would write,
                                             or when a registered row lacks its source or date (CI)

tests/unit/tools/test_vendor_facts.py runs the check.
"""

from __future__ import print_function

import argparse
import ast
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
    # i36-g: Volcano/Kubernetes words, node_exporter, distribution names, containerd (row functions inline)
    ('Volcano scheduler actions and plugins', 'plugins/module_utils/kubernetes/volcano_tables.py', 'SCHEDULER_VOCABULARY',
     'the scheduler actions and plugins the volcano role accepts in its scheduler configuration, per Volcano minor',
     lambda: _keyed_rows(_module('kubernetes.volcano_tables').SCHEDULER_VOCABULARY, lambda k: 'Volcano %s' % k)),
    ('containerd CRI plugin per config version', 'plugins/module_utils/engines/container_engines.py', 'CONTAINERD_CRI_ROWS',
     'the CRI plugin table nvidia_container_toolkit merges its runtime into, per containerd config version',
     lambda: _dict_rows(_module('engines.container_engines').CONTAINERD_CRI_ROWS, lambda r: 'config version %d' % r['version'])),
    ('Volcano queue hierarchy', 'plugins/module_utils/kubernetes/volcano_tables.py', 'HIERARCHY_ROWS',
     'the Volcano minor from which the volcano role renders a queue with a parent',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').HIERARCHY_ROWS, lambda r: 'Volcano %s' % r['volcano'])),
    ('Volcano Job phases', 'plugins/module_utils/kubernetes/volcano_tables.py', 'JOB_PHASE_ROWS',
     "the Volcano Job phases the volcano role's smoke job reads",
     lambda: _dict_rows(_module('kubernetes.volcano_tables').JOB_PHASE_ROWS, lambda r: r['phase'])),
    ('Volcano Job phases that end a smoke job', 'plugins/module_utils/kubernetes/volcano_tables.py', 'JOB_DONE_PHASE_ROWS',
     'when the volcano role stops waiting for its smoke job',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').JOB_DONE_PHASE_ROWS, lambda r: r['phase'])),
    ('Volcano Job policy events', 'plugins/module_utils/kubernetes/volcano_tables.py', 'JOB_POLICY_EVENT_ROWS',
     'the lifecycle policy events a Volcano Job the role renders may name, per the job webhook of its release',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').JOB_POLICY_EVENT_ROWS, lambda r: r['event'])),
    ('Volcano Job policy actions', 'plugins/module_utils/kubernetes/volcano_tables.py', 'JOB_POLICY_ACTION_ROWS',
     'the lifecycle policy actions a Volcano Job the role renders may name, per the job webhook of its release',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').JOB_POLICY_ACTION_ROWS, lambda r: r['action'])),
    ('Kubernetes core resource names', 'plugins/module_utils/kubernetes/volcano_tables.py', 'CORE_RESOURCE_ROWS',
     'the core resource names a Volcano queue the role renders may name',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').CORE_RESOURCE_ROWS, lambda r: r['resource'])),
    ('Extended resource names', 'plugins/module_utils/kubernetes/volcano_tables.py', 'RESOURCE_PATTERN_ROWS',
     'the hugepages and device plugin resource names (nvidia.com/gpu, MIG, Volcano vGPU) a queue may name',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').RESOURCE_PATTERN_ROWS, lambda r: r['pattern'])),
    ('Label prefixes of other tools', 'plugins/module_utils/kubernetes/volcano_tables.py', 'FOREIGN_LABEL_PREFIX_ROWS',
     'the label prefixes the volcano role never writes node labels under',
     lambda: _dict_rows(_module('kubernetes.volcano_tables').FOREIGN_LABEL_PREFIX_ROWS, lambda r: r['prefix'])),
    ('ipmi_exporter collectors', 'plugins/module_utils/monitoring/ipmi_exporter_sources.py', 'COLLECTOR_ROWS',
     'the collector names a module of the ipmi_exporter role may list (ipmi_exporter 1.6.1)',
     lambda: _dict_rows(_module('monitoring.ipmi_exporter_sources').COLLECTOR_ROWS, lambda r: r['collector'])),
    ('ipmi_exporter drivers', 'plugins/module_utils/monitoring/ipmi_exporter_sources.py', 'DRIVER_ROWS',
     'the FreeIPMI driver types a remote module of the ipmi_exporter role may name',
     lambda: _dict_rows(_module('monitoring.ipmi_exporter_sources').DRIVER_ROWS, lambda r: r['driver'])),
    ('ipmi_exporter privilege levels', 'plugins/module_utils/monitoring/ipmi_exporter_sources.py', 'PRIVILEGE_ROWS',
     'the IPMI privilege levels a module of the ipmi_exporter role may ask for',
     lambda: _dict_rows(_module('monitoring.ipmi_exporter_sources').PRIVILEGE_ROWS, lambda r: r['privilege'])),
    ('node_exporter collectors', 'plugins/module_utils/monitoring/node_exporter_sources.py', 'COLLECTOR_ROWS',
     'the collector names the node_exporter role accepts (a name Linux builds lack is refused before any change)',
     lambda: _dict_rows(_module('monitoring.node_exporter_sources').COLLECTOR_ROWS, lambda r: r['collector'])),
    ('node_exporter pinned sha256', 'plugins/module_utils/monitoring/node_exporter_sources.py', 'PINNED_SHA256_ROWS',
     'the sha256 the node_exporter role checks the pinned release tarball against',
     lambda: _dict_rows(_module('monitoring.node_exporter_sources').PINNED_SHA256_ROWS, lambda r: '%s %s' % (r['version'], r['goarch']))),
    ('node_exporter release architectures', 'plugins/module_utils/monitoring/node_exporter_sources.py', 'GOARCH_ROWS',
     'the architecture word of the node_exporter release file the role downloads, per machine',
     lambda: _dict_rows(_module('monitoring.node_exporter_sources').GOARCH_ROWS, lambda r: r['machine'])),
    ('Distribution codename per CUDA repository directory', 'plugins/module_utils/packages/cuda_repos.py', 'CODENAME_ROWS',
     'the codename a per-distribution CUDA repository variable may be keyed by',
     lambda: _dict_rows(_module('packages.cuda_repos').CODENAME_ROWS, lambda r: r['directory'])),
    ("Distributions of NVIDIA's EL repository", 'plugins/module_utils/packages/cuda_repos.py', 'EL_LIKE_ROWS',
     "which distributions get NVIDIA's rhel CUDA repository and the EL driver branches",
     lambda: _dict_rows(_module('packages.cuda_repos').EL_LIKE_ROWS, lambda r: r['distribution'])),
    ('Security archive labels', 'plugins/module_utils/packages/held_updates.py', 'SECURITY_LABEL_ROWS',
     'which held-back updates the roles report as security updates',
     lambda: _dict_rows(_module('packages.held_updates').SECURITY_LABEL_ROWS, lambda r: r['label'])),
    ("The distribution's own apt origins", 'plugins/module_utils/probe/packages.py', 'DISTRO_ORIGIN_ROWS',
     "whether the probe reports an installed component as the distribution's package",
     lambda: _dict_rows(_module('probe.packages').DISTRO_ORIGIN_ROWS, lambda r: r['origin'])),
    ('Kernel packages of the running release', 'plugins/module_utils/host/os_tuning_sources.py', 'RELEASE_PACKAGE_ROWS',
     'the kernel packages os_tuning holds with the running kernel',
     lambda: _dict_rows(_module('host.os_tuning_sources').RELEASE_PACKAGE_ROWS, lambda r: r['pattern'])),
    ('Kernel package names', 'plugins/module_utils/host/os_tuning_sources.py', 'KERNEL_SAMPLE_ROWS',
     'which unattended-upgrades blacklist globs os_tuning treats as kernel globs',
     lambda: _dict_rows(_module('host.os_tuning_sources').KERNEL_SAMPLE_ROWS, lambda r: r['name'])),
)


# The SEL decoding of gpu_validate's ``sel`` check (bmc/sel.py), each row quoting FreeIPMI's string of
# the IPMI 2.0 tables (bmc/sel_sources.py; a unit test checks each name against the quote).
def _sel_rows(table, kind):
    def rows():
        sel, src = _module('bmc.sel'), _module('bmc.sel_sources')
        out = []
        for key, value in sorted(getattr(sel, table).items()):
            if kind == 'offset':
                (code, offset), (status, name, dummy) = key, value
                out.append(('type 0x%02X offset 0x%02X' % (code, offset),
                            {'name': name, 'verdict': status or 'not judged'}, src.quote('offset', code, offset),
                            src.READ))
            elif kind == 'type':
                out.append(('sensor type 0x%02X' % value, {'name': key}, src.quote(kind, value), src.READ))
            else:
                out.append(('%s 0x%02X' % (kind, key), {'name': value}, src.quote(kind, key), src.READ))
        return out
    return rows


TABLES += (
    ('IPMI sensor types the SEL check judges', 'plugins/module_utils/bmc/sel.py', 'TYPE_NAMES',
     'the sensor type code of each sensor type name ipmi-sel and ipmitool print', _sel_rows('TYPE_NAMES', 'type')),
    ('IPMI sensor-specific event offsets', 'plugins/module_utils/bmc/sel.py', 'OFFSETS',
     'what each SEL event of a judged sensor type is and whether it fails or warns the node',
     _sel_rows('OFFSETS', 'offset')),
    ('IPMI threshold event offsets', 'plugins/module_utils/bmc/sel.py', 'THRESHOLDS',
     'the threshold crossings of temperature and fan sensors', _sel_rows('THRESHOLDS', 'threshold')),
    ('IPMI redundancy event offsets', 'plugins/module_utils/bmc/sel.py', 'REDUNDANCY',
     'the redundancy states of power supplies and fans', _sel_rows('REDUNDANCY', 'redundancy')),
)


# i36-f: the NVIDIA/hardware tables that were PENDING, row by row (each with its source and read date).
def _rows_of(module, attribute, key):
    """The rows of ``module.attribute`` (dicts with ``source`` and ``read``), each named by ``key(row)``."""
    return lambda: _dict_rows(getattr(_module(module), attribute), key)


_PROBE_SOURCES = 'plugins/module_utils/probe/nvidia_sources.py'
_DRIVER_SOURCES = 'plugins/module_utils/packages/driver_sources.py'
TABLES += (
    ('NVIDIA Container Toolkit packages', 'plugins/module_utils/engines/container_toolkit.py', 'PACKAGE_ROWS',
     'the packages nvidia_container_toolkit installs, pins and holds at one version',
     _rows_of('engines.container_toolkit', 'PACKAGE_ROWS', lambda r: r['package'])),
    ('NVIDIA Container Toolkit CDI refresh units', 'plugins/module_utils/engines/container_toolkit.py', 'CDI_UNIT_ROWS',
     'the systemd units nvidia_container_toolkit enables so that the CDI spec follows the driver',
     _rows_of('engines.container_toolkit', 'CDI_UNIT_ROWS', lambda r: r['unit'])),
    ('PCI class codes', 'plugins/module_utils/probe/pci_sources.py', 'PCI_CLASS_ROWS',
     'which PCI functions the probe keeps as GPUs, NVSwitches, a GPU\'s companion functions and network adapters',
     _rows_of('probe.pci_sources', 'PCI_CLASS_ROWS', lambda r: r['class'])),
    ('PCIe generations: rate and encoding', 'plugins/module_utils/probe/pci_sources.py', 'PCIE_RATE_ROWS',
     'the PCIe generation the probe reports for a link speed, and the x16 peak gpu_validate judges host<->device '
     'copies against (hardware/gpu_peaks.py PCIE_X16_GBPS)',
     _rows_of('probe.pci_sources', 'PCIE_RATE_ROWS', lambda r: 'Gen%d' % r['gen'])),
    ('DCGM fields', 'plugins/module_utils/monitoring/dcgm_fields.py', 'FIELD_ROWS',
     'the DCGM fields dcgm_exporter accepts in its counters file, with their Prometheus type and help (dcgm.py FIELDS)',
     _rows_of('monitoring.dcgm_fields', 'FIELD_ROWS', lambda r: r['name'])),
    ('DCGM 4 packages per CUDA major', 'plugins/module_utils/monitoring/dcgm.py', 'CUDA_MAJOR_ROWS',
     'the CUDA majors dcgm_exporter accepts for datacenter-gpu-manager-4-cuda<major>',
     _rows_of('monitoring.dcgm', 'CUDA_MAJOR_ROWS', lambda r: 'CUDA %s' % r['cuda_major'])),
    ('CUDA repository architecture directory', 'plugins/module_utils/packages/cuda_repos.py', 'ARCH_ROWS',
     'the architecture directory of NVIDIA\'s CUDA repository a host of that machine type is pointed at',
     _rows_of('packages.cuda_repos', 'ARCH_ROWS', lambda r: r['machine'])),
    ('Driver family pin globs', _DRIVER_SOURCES, 'DRIVER_FAMILY_ROWS',
     'the packages nvidia_driver pins to the driver\'s version (driver_resolve.py DRIVER_FAMILY)',
     _rows_of('packages.driver_sources', 'DRIVER_FAMILY_ROWS', lambda r: r['glob'])),
    ('Driver transaction package globs', _DRIVER_SOURCES, 'DRIVER_PATTERN_ROWS',
     'the packages whose state nvidia_driver saves before a driver change and restores on failure '
     '(driver_host.py DRIVER_PATTERNS)', _rows_of('packages.driver_sources', 'DRIVER_PATTERN_ROWS', lambda r: r['glob'])),
    ('NVLSM companion packages', _DRIVER_SOURCES, 'NVLSM_PACKAGE_ROWS',
     'the packages nvidia_driver installs with NVLSM on NVLink 5 hosts (nvidia_repo.py NVLSM_EXTRA_PACKAGES)',
     _rows_of('packages.driver_sources', 'NVLSM_PACKAGE_ROWS', lambda r: r['package'])),
    ('NVLSM kernel modules', _DRIVER_SOURCES, 'NVLSM_MODULE_ROWS',
     'the kernel modules nvidia_driver loads for NVLSM on NVLink 5 hosts (nvidia_repo.py NVLSM_MODULES)',
     _rows_of('packages.driver_sources', 'NVLSM_MODULE_ROWS', lambda r: r['module'])),
    ('nvidia-smi query fields', _PROBE_SOURCES, 'QUERY_FIELD_ROWS',
     'the --query-gpu fields the probe asks at its nvidia-smi depth (nvidia_smi.py QUERY_FIELDS, LEGACY_QUERY_FIELDS)',
     _rows_of('probe.nvidia_sources', 'QUERY_FIELD_ROWS', lambda r: r['field'])),
    ('nvidia-smi maximum clock fields', _PROBE_SOURCES, 'MAX_CLOCK_FIELD_ROWS',
     'the --query-gpu fields of the probe\'s second query, each GPU\'s maximum clocks (nvidia_smi.py MAX_CLOCK_FIELDS)',
     _rows_of('probe.nvidia_sources', 'MAX_CLOCK_FIELD_ROWS', lambda r: r['field'])),
    ('nvidia-smi field fallbacks', _PROBE_SOURCES, 'FIELD_FALLBACK_ROWS',
     'what the probe asks instead when a driver refuses a field (nvidia_smi.py FIELD_FALLBACKS)',
     _rows_of('probe.nvidia_sources', 'FIELD_FALLBACK_ROWS', lambda r: r['field'])),
    ('nvidia-smi topo -m link codes', _PROBE_SOURCES, 'LINK_CODE_ROWS',
     'the matrix codes the topo parser accepts (nvidia_topo.py LINK_CODES)',
     _rows_of('probe.nvidia_sources', 'LINK_CODE_ROWS', lambda r: r['code'])),
    ('NVML NVLink versions', _PROBE_SOURCES, 'NVLINK_VERSION_ROWS',
     'the NVLink version the probe reports for each nvmlNvlinkVersion_t value (nvml.py NVLINK_VERSIONS)',
     _rows_of('probe.nvidia_sources', 'NVLINK_VERSION_ROWS', lambda r: 'value %d' % r['value'])),
    ('NVML clock event reasons', _PROBE_SOURCES, 'THROTTLE_REASON_ROWS',
     'the names the probe gives the clock event (throttle) reason bits NVML reports (nvml.py THROTTLE_REASONS)',
     _rows_of('probe.nvidia_sources', 'THROTTLE_REASON_ROWS', lambda r: r['bit'])),
    ('NVML NVLink remote device types', _PROBE_SOURCES, 'REMOTE_TYPE_ROWS',
     'what the probe reports at the far end of an NVLink (nvml.py _REMOTE_TYPES)',
     _rows_of('probe.nvidia_sources', 'REMOTE_TYPE_ROWS', lambda r: 'value %d' % r['value'])),
    ('NVML GPU topology levels', _PROBE_SOURCES, 'TOPOLOGY_LEVEL_ROWS',
     'the topo -m code the probe reports for each NVML topology level between two GPUs (nvml.py _TOPOLOGY_CODES)',
     _rows_of('probe.nvidia_sources', 'TOPOLOGY_LEVEL_ROWS', lambda r: 'level %d' % r['level'])),
    ('dcgmi diag JSON root keys', 'plugins/module_utils/validate/dcgm_diag.py', 'ROOT_KEY_ROWS',
     'the top-level key gpu_validate reads the results of dcgmi diag -j under (dcgm_diag.py ROOT_KEYS)',
     _rows_of('validate.dcgm_diag', 'ROOT_KEY_ROWS', lambda r: r['key'])),
)


# issue 40: the storage role's vendor rows (what mkfs and mdadm accept, the Debian packages of the tools).
_STORAGE_SOURCES = 'plugins/module_utils/storage/sources.py'
TABLES += (
    ('Smallest device per filesystem', _STORAGE_SOURCES, 'FILESYSTEM_MIN_ROWS',
     'the smallest drive or array the storage role formats with each filesystem (storage/plan.py MIN_BYTES)',
     _rows_of('storage.sources', 'FILESYSTEM_MIN_ROWS', lambda r: r['filesystem'])),
    ('Storage tools and their Debian packages', _STORAGE_SOURCES, 'PACKAGE_ROWS',
     'the package the storage role installs when a tool its plan needs is missing (storage/plan.py PACKAGES)',
     _rows_of('storage.sources', 'PACKAGE_ROWS', lambda r: r['tool'])),
    ('Fewest members per md RAID level', _STORAGE_SOURCES, 'RAID_MIN_ROWS',
     'how many drives a storage volume of each RAID level needs (storage/inputs.py RAID_MIN_MEMBERS)',
     _rows_of('storage.sources', 'RAID_MIN_ROWS', lambda r: 'RAID %d' % r['level'])),
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


# Every module-level table of plugins/module_utils (module_tables()) is judged once: registered above,
# DERIVED from a registered table, PENDING (a vendor table whose rows carry no source and read date yet:
# the page names it), or NOT_VENDOR (with the reason). unclassified_tables() lists any other, so a new
# table - a vendor table without sources among them - fails a unit test until someone judges it.
_M = 'plugins/module_utils/'
_WHY = ('found by the issue 36 scan of module_utils: vendor facts without a source and read date per row yet '
        '(%s)')

# Tables the collection decides by that do not carry a source and a read date per row yet:
# (file, table, what it decides, why it is not listed row by row).
PENDING = (
)
# Tables built from a registered table: (file, name) -> the registered table they are built from (its rows
# carry the sources): its NAME in the same file, or 'folder/file.py NAME' under module_utils.
DERIVED = {
    (_M + 'kubernetes/volcano_tables.py', '_ACTIONS'): 'SCHEDULER_VOCABULARY',
    (_M + 'kubernetes/volcano_tables.py', '_PLUGINS_1_6'): 'SCHEDULER_VOCABULARY',
    (_M + 'kubernetes/volcano_tables.py', '_PLUGINS_1_7'): 'SCHEDULER_VOCABULARY',
    (_M + 'kubernetes/volcano_tables.py', '_PLUGINS_1_9'): 'SCHEDULER_VOCABULARY',
    (_M + 'kubernetes/volcano_tables.py', '_PLUGINS_1_12'): 'SCHEDULER_VOCABULARY',
    (_M + 'kubernetes/volcano_tables.py', '_PLUGINS_1_13'): 'SCHEDULER_VOCABULARY',
    (_M + 'cuda/toolkit.py', 'RELEASE_DRIVER'): 'RELEASE_DRIVER_ROWS',
    (_M + 'cuda/toolkit.py', 'RELEASE_DRIVER_TEXT'): 'RELEASE_DRIVER_ROWS',
    (_M + 'cuda/toolkit.py', 'DISTRO_TOOLKIT'): 'DISTRO_TOOLKIT_ROWS',
    (_M + 'cuda/toolkit.py', 'CUDNN_PACKAGE'): 'CUDNN_PACKAGE_ROWS',
    (_M + 'cuda/toolkit.py', 'NCCL_PACKAGES'): 'NCCL_PACKAGE_ROWS',
    (_M + 'cuda/toolkit.py', 'NSIGHT_PACKAGES'): 'TOOLKIT_PACKAGE_ROWS',
    (_M + 'python_env/cuda_match.py', 'TORCH_CUDA_TAGS'): 'TORCH_CUDA_TAG_ROWS',
    (_M + 'python_env/cuda_match.py', 'NEWEST_TORCH_ROW'): 'TORCH_CUDA_TAG_ROWS',
    (_M + 'python_env/cuda_match.py', 'MINOR_COMPAT_DRIVER'): 'MINOR_COMPAT_ROWS',
    (_M + 'python_env/cuda_match.py', 'TF_AND_CUDA_MIN'): 'TF_AND_CUDA_ROWS',
    (_M + 'python_env/cuda_match.py', 'TF_AND_CUDA_CUDA'): 'TF_AND_CUDA_ROWS',
    (_M + 'python_env/cuda_match.py', 'DALI_FLAVOURS'): 'DALI_FLAVOUR_ROWS',
    (_M + 'python_env/torch_builds.py', 'ARCH_CAPABILITIES'): 'ARCH_CAPABILITY_ROWS',
    (_M + 'python_env/torch_builds.py', '_K37'): 'BUILDS',
    (_M + 'python_env/torch_builds.py', '_CU118'): 'BUILDS',
    (_M + 'python_env/torch_builds.py', '_CU12_OLD'): 'BUILDS',
    (_M + 'python_env/torch_builds.py', '_TURING_BLACKWELL'): 'BUILDS',
    (_M + 'python_env/torch_builds.py', '_VOLTA_BLACKWELL'): 'BUILDS',
    (_M + 'hardware/gpu_models.py', '_CHIP_ARCH'): 'CHIP_ARCH_ROWS',
    (_M + 'hardware/gpu_models.py', '_CC_ARCH'): 'CC_ARCH_ROWS',
    (_M + 'hardware/gpu_models.py', '_MIG_CHIPS'): 'MIG_CHIP_ROWS',
    (_M + 'hardware/gpu_models.py', '_CUDA_GPUS_ROWS'): 'CC_ARCH_ROWS',
    (_M + 'hardware/gpu_models.py', '_NAMED_THERE'): 'CC_ARCH_ROWS',
    (_M + 'hardware/gpu_models.py', '_CUDA_LEGACY_ROWS'): 'CC_ARCH_ROWS',
    (_M + 'hardware/gpu_model_sources.py', '_README_NAMES'): 'hardware/gpu_models.py KNOWN_GPUS',
    (_M + 'hardware/gpu_model_sources.py', '_MIG_EVIDENCE'): 'hardware/gpu_models.py KNOWN_GPUS',
    (_M + 'kubernetes/volcano_tables.py', 'COMPATIBILITY'): 'COMPATIBILITY_ROWS',
    (_M + 'monitoring/dcgm.py', 'CUDA_MIN_BRANCH'): 'CUDA_MIN_BRANCH_ROWS',
    (_M + 'monitoring/dcgm_packages.py', 'PROPRIETARY_PROFILING_ARCHITECTURES'): 'PROFILING_MODULE',
    (_M + 'packages/cuda_repos.py', 'KEY_3BF863CC'): 'REPOSITORIES',
    (_M + 'packages/cuda_repos.py', 'KEY_8793F200'): 'REPOSITORIES',
    (_M + 'packages/cuda_repos.py', 'KEY_D42D0685'): 'REPOSITORIES',
    (_M + 'packages/cuda_repos.py', 'REPOSITORIES_DIRS'): 'REPOSITORIES',
    (_M + 'packages/driver_branches.py', 'BRANCHES'): 'BRANCH_ROWS',
    (_M + 'validate/xid.py', 'XID_MEANINGS'): 'XID_TABLE',
    (_M + 'validate/xid.py', 'XID_CRITICAL'): 'XID_TABLE',
    (_M + 'validate/xid.py', 'XID_PAGE'): 'XID_TABLE',
    (_M + 'bmc/sel.py', 'THRESHOLD_WARN'): 'THRESHOLDS',
    (_M + 'bmc/sel.py', '_BY_TYPE'): 'OFFSETS',
    (_M + 'bmc/sel.py', '_TYPE_BY_NAME'): 'TYPE_NAMES',
    # the quotes the SEL rows' sources are made of (a unit test checks each row against them)
    (_M + 'bmc/sel_sources.py', 'SENSOR_SPECIFIC'): 'bmc/sel.py OFFSETS',
    (_M + 'bmc/sel_sources.py', 'THRESHOLD'): 'bmc/sel.py THRESHOLDS',
    (_M + 'bmc/sel_sources.py', 'REDUNDANCY'): 'bmc/sel.py REDUNDANCY',
    (_M + 'bmc/sel_sources.py', 'SENSOR_TYPES'): 'bmc/sel.py TYPE_NAMES',
    # i36-f
    (_M + 'engines/container_toolkit.py', 'PACKAGES'): 'PACKAGE_ROWS',
    (_M + 'engines/container_toolkit.py', 'CDI_UNITS'): 'CDI_UNIT_ROWS',
    (_M + 'hardware/gpu_peaks.py', 'PCIE_X16_GBPS'): 'probe/pci_sources.py PCIE_RATE_ROWS',
    (_M + 'hardware/precision.py', 'BF16_FROM'): 'NATIVE_PRECISION',
    # a copy (measure.py runs without the collection), kept equal to precision.BF16_FROM by a unit test
    (_M + 'validate/measure.py', 'NATIVE_BF16_FROM'): 'hardware/precision.py NATIVE_PRECISION',
    (_M + 'monitoring/dcgm.py', 'FIELDS'): 'monitoring/dcgm_fields.py FIELD_ROWS',
    (_M + 'monitoring/dcgm.py', 'CUDA_MAJORS'): 'CUDA_MAJOR_ROWS',
    (_M + 'packages/cuda_repos.py', 'ARCHES'): 'ARCH_ROWS',
    (_M + 'packages/driver_host.py', 'DRIVER_PATTERNS'): 'packages/driver_sources.py DRIVER_PATTERN_ROWS',
    (_M + 'packages/driver_resolve.py', 'DRIVER_FAMILY'): 'packages/driver_sources.py DRIVER_FAMILY_ROWS',
    (_M + 'packages/nvidia_repo.py', 'NVLSM_EXTRA_PACKAGES'): 'packages/driver_sources.py NVLSM_PACKAGE_ROWS',
    (_M + 'packages/nvidia_repo.py', 'NVLSM_MODULES'): 'packages/driver_sources.py NVLSM_MODULE_ROWS',
    (_M + 'probe/nvidia_smi.py', 'QUERY_FIELDS'): 'probe/nvidia_sources.py QUERY_FIELD_ROWS',
    (_M + 'probe/nvidia_smi.py', 'LEGACY_QUERY_FIELDS'): 'probe/nvidia_sources.py QUERY_FIELD_ROWS',
    (_M + 'probe/nvidia_smi.py', 'FIELD_FALLBACKS'): 'probe/nvidia_sources.py FIELD_FALLBACK_ROWS',
    (_M + 'probe/nvidia_smi.py', 'MAX_CLOCK_FIELDS'): 'probe/nvidia_sources.py MAX_CLOCK_FIELD_ROWS',
    (_M + 'probe/nvml.py', 'NVLINK_VERSIONS'): 'probe/nvidia_sources.py NVLINK_VERSION_ROWS',
    (_M + 'probe/nvml.py', 'THROTTLE_REASONS'): 'probe/nvidia_sources.py THROTTLE_REASON_ROWS',
    (_M + 'probe/nvml.py', '_REMOTE_TYPES'): 'probe/nvidia_sources.py REMOTE_TYPE_ROWS',
    (_M + 'probe/nvml.py', '_TOPOLOGY_CODES'): 'probe/nvidia_sources.py TOPOLOGY_LEVEL_ROWS',
    (_M + 'probe/nvidia_topo.py', 'LINK_CODES'): 'probe/nvidia_sources.py LINK_CODE_ROWS',
    (_M + 'probe/pci.py', 'GPU_CLASSES'): 'probe/pci_sources.py PCI_CLASS_ROWS',
    (_M + 'probe/pci.py', 'NVSWITCH_CLASSES'): 'probe/pci_sources.py PCI_CLASS_ROWS',
    (_M + 'probe/pci.py', 'NIC_CLASSES'): 'probe/pci_sources.py PCI_CLASS_ROWS',
    (_M + 'probe/pci.py', 'COMPANION_CLASSES'): 'probe/pci_sources.py PCI_CLASS_ROWS',
    (_M + 'probe/pci.py', '_SPEED_GEN'): 'probe/pci_sources.py PCIE_RATE_ROWS',
    (_M + 'validate/dcgm_diag.py', 'ROOT_KEYS'): 'ROOT_KEY_ROWS',
    # i36-g
    (_M + 'engines/container_engines.py', 'CONTAINERD_CRI'): 'CONTAINERD_CRI_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'HIERARCHY_MIN_VERSION'): 'HIERARCHY_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'JOB_PHASES'): 'JOB_PHASE_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'JOB_DONE_PHASES'): 'JOB_DONE_PHASE_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'JOB_POLICY_EVENTS'): 'JOB_POLICY_EVENT_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'JOB_POLICY_ACTIONS'): 'JOB_POLICY_ACTION_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'CORE_RESOURCES'): 'CORE_RESOURCE_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'RESOURCE_PATTERNS'): 'RESOURCE_PATTERN_ROWS',
    (_M + 'kubernetes/volcano_tables.py', 'FOREIGN_LABEL_PREFIXES'): 'FOREIGN_LABEL_PREFIX_ROWS',
    (_M + 'monitoring/ipmi_exporter.py', 'KNOWN_COLLECTORS'): 'monitoring/ipmi_exporter_sources.py COLLECTOR_ROWS',
    (_M + 'monitoring/ipmi_exporter.py', 'DRIVERS'): 'monitoring/ipmi_exporter_sources.py DRIVER_ROWS',
    (_M + 'monitoring/ipmi_exporter.py', 'PRIVILEGES'): 'monitoring/ipmi_exporter_sources.py PRIVILEGE_ROWS',
    (_M + 'monitoring/node_exporter.py', 'KNOWN_COLLECTORS'): 'monitoring/node_exporter_sources.py COLLECTOR_ROWS',
    (_M + 'monitoring/node_exporter.py', 'PINNED_SHA256'): 'monitoring/node_exporter_sources.py PINNED_SHA256_ROWS',
    (_M + 'monitoring/node_exporter.py', 'GOARCH'): 'monitoring/node_exporter_sources.py GOARCH_ROWS',
    (_M + 'monitoring/node_exporter_sources.py', '_COLLECTORS'): 'COLLECTOR_ROWS',
    (_M + 'packages/cuda_repos.py', 'CODENAMES'): 'CODENAME_ROWS',
    (_M + 'packages/cuda_repos.py', 'EL_LIKE'): 'EL_LIKE_ROWS',
    (_M + 'packages/held_updates.py', 'SECURITY_LABELS'): 'SECURITY_LABEL_ROWS',
    (_M + 'probe/packages.py', 'DISTRO_ORIGINS'): 'DISTRO_ORIGIN_ROWS',
    (_M + 'host/os_tuning.py', 'KERNEL_SAMPLES'): 'host/os_tuning_sources.py KERNEL_SAMPLE_ROWS',
    (_M + 'host/os_tuning.py', 'RELEASE_PACKAGES'): 'host/os_tuning_sources.py RELEASE_PACKAGE_ROWS',
    # issue 40
    (_M + 'storage/plan.py', 'MIN_BYTES'): 'storage/sources.py FILESYSTEM_MIN_ROWS',
    (_M + 'storage/plan.py', 'PACKAGES'): 'storage/sources.py PACKAGE_ROWS',
    (_M + 'storage/inputs.py', 'RAID_MIN_MEMBERS'): 'storage/sources.py RAID_MIN_ROWS',
}
_OWN = 'the collection\'s own vocabulary (its choices, keys, variable, file, step or role names), no vendor fact'
_POLICY = 'the collection\'s own policy (bounds, thresholds, verdicts, opt-ins), documented with its role'
_WORDS = ('words a tool prints that a parser accepts or skips (systemd, apt, dpkg, nvidia-smi, NVML, dcgmi states and '
          'errors), not a version, package, device or compatibility fact')
_PATHS = 'paths or environment of the host the collection reads, writes or guards, no vendor fact'
_CODE = 'a dispatch table of the collection\'s functions'
_SPEC = 'a format or language fact (TOML escapes and floats, size suffixes, boolean words), no vendor fact'
_TEST = 'sample values the collection\'s own careless-value suite tries, no vendor fact'
NOT_VENDOR = dict(
    [((_M + 'core/' + f, n), r) for f, names, r in (
        ('platforms.py', ('ROLE_FACTS',), _OWN), ('role_inputs.py', ('FALSE_WORDS', 'TRUE_WORDS'), _SPEC),
        ('role_inputs.py', ('KNOWN_TYPES', 'SCALAR_TYPES'), _OWN), ('run_state.py', ('COMPUTED_NAMES',), _OWN),
        ('status.py', ('BUILDERS',), _CODE), ('systemd.py', ('SYSTEM_DIRS', '_VIRTUAL_TREES'), _PATHS),
        ('unknown_vars.py', ('MODES', 'OUTPUTS'), _OWN),
        ('value_kinds.py', ('CARELESS',), _TEST), ('input_checks.py', ('EVERY', 'HOST_CHECKS', 'REGISTRY'), _CODE),
        ('value_kinds.py', ('CLASS_OF_KIND', 'CLASS_TYPES', 'HOST_PORTS', 'KINDS', 'NOT_THIS_CLASS',
                            'PLAYBOOK_VARIABLES', 'VARIABLES'), _OWN),
        ('value_kinds.py', ('_R',), _POLICY), ('value_kinds.py', ('_VIRTUAL',), _PATHS),
        ('value_numbers.py', ('CLOCK_RANGES', 'POWER_RANGE'), _POLICY), ('value_numbers.py', ('_DURATION_MS',), _SPEC),
        ('file_values.py', ('SYSCTL_DOMAINS', 'SYSCTL_WORDS', 'PAM_DOMAINS'), _POLICY),
        ('file_values.py', ('_SIZE_FACTOR',), _SPEC),
        ('value_posture_careless.py', ('CARELESS', 'CARELESS_BY_VARIABLE'), _TEST),
        ('value_posture_careless.py', ('CLASS_OF_KIND', 'REFUSED_THROUGH_OTHERS'), _OWN),
        ('value_posture.py', ('NOT_THIS_CLASS', 'OPT_INS', 'PLAYBOOK_VARIABLES', 'VARIABLES'), _OWN),
        ('value_posture.py', ('MOVING_TAGS', 'PRIVILEGED_GROUPS', 'PRIVILEGED_USERS'), _POLICY),
        ('value_lists.py', ('REPEATABLE_CMDLINE',), _POLICY),
    ) for n in names]
    + [((_M + 'storage/' + f, n), r) for f, names, r in (
        ('host.py', ('LSBLK_ARGV',), 'the lsblk command line the storage role reads the drives with: ' + _OWN),
        ('inputs.py', ('ALLOWED_BELOW', 'ALLOWED_ROOTS', 'REFUSED_OPTIONS'), _POLICY),
        ('inputs.py', ('FILESYSTEMS', 'KEYS', 'RAID_LEVELS', 'SCHEDULERS', 'SELECTORS'), _OWN),
        ('lsblk.py', ('MEMBER_TYPES', 'WHOLE_TYPES'), _WORDS), ('lsblk.py', ('SYSTEM_MOUNTS',), _PATHS),
        ('plan.py', ('KERNEL_SHOWN',), 'mount options the kernel shows in /proc/self/mountinfo: ' + _WORDS),
    ) for n in names]
    + [((_M + f, n), r) for f, names, r in (
        ('cuda/toolkit.py', ('DISTRO_PACKAGES', 'DISTRO_NCCL'), 'Debian\'s own package names and releases, each '
         'read with apt-cache on the lab images as the comment says; CI installs them (molecule cuda_toolkit_distro)'),
        ('driver/gpu_settings.py', ('SETTINGS',), _OWN),
        ('driver/gpu_settings.py', ('FIELDS',), 'nvidia-smi query fields of the settings the role applies: ' + _WORDS),
        ('driver/gpu_settings.py', ('_OFF', '_ON', '_UNSUPPORTED'), _WORDS),
        ('engines/container_engines.py', ('CDI_SPEC_DIRS',), _PATHS),
        ('engines/container_engines.py', ('_FALLBACK_RUNTIME',), 'the runc runtime entry the role writes back: ' + _OWN),
        ('engines/container_toolkit.py', ('ENGINES',), _OWN), ('engines/toml_lite.py', ('_ESCAPES', '_SPECIAL_FLOAT'), _SPEC),
        ('hardware/gpu_models.py', ('CONTRACT_ARCHITECTURES', 'SEGMENTS'), _OWN),
        ('hardware/gpu_models.py', ('ARCHITECTURES',), 'the architecture names the probe reports, oldest first: each '
         'is the architecture of a CHIP_ARCH_ROWS row (a unit test checks)'),
        ('hardware/pci_ids.py', ('DEFAULT_PCI_IDS_PATHS',), _PATHS),
        ('hardware/pci_ids.py', ('_PCI_IDS_CACHE',), 'a cache of the host\'s parsed pci.ids, empty until used'),
        ('hardware/gpu_peaks.py', ('KEYS',), _OWN),
        ('host/os_tuning_files.py', ('FILE_KEYS',), _OWN), ('host/os_tuning_files.py', ('RENDERERS',), _CODE),
        ('host/os_tuning_host.py', ('C_ENV',), _PATHS), ('host/os_tuning_host.py', ('REQUIRED_INPUTS',), _OWN),
        ('host/os_tuning_inputs.py', ('PATH_RULES', 'SYSCTL_LAYERS'), _OWN),
        ('host/os_tuning_inputs.py', ('REBOOT_TIMEOUT_RANGE',), _POLICY),
        ('kubernetes/volcano.py', ('INSTALL_METHODS',), _OWN),
        ('kubernetes/volcano_scheduling.py', ('PRIORITY_CLASS_KEYS', 'QUEUE_KEYS'), _OWN),
        ('kubernetes/volcano_tables.py', ('VALIDATED_KUBERNETES',), 'the Kubernetes versions the collection\'s own '
         'tests validate rendered objects against (kubernetes-validate): its test scope'),
        ('monitoring/dcgm.py', ('TYPES', '_COUNTER_LISTS'), _OWN),
        ('monitoring/dcgm.py', ('_HOST_SANDBOX',), 'the systemd sandboxing the collection applies: ' + _POLICY),
        ('monitoring/dcgm_host.py', ('_ENABLED', '_RUNNING'), _WORDS),
        ('monitoring/gpu_textfile.py', ('HELP',), 'help texts of the collection\'s own metrics'),
        ('monitoring/ipmi_exporter.py', ('MODULE_KEYS', 'MODULE_DEFAULTS'), _OWN),
        ('monitoring/node_exporter_fast_path.py', ('ENABLED_STATES',), _WORDS),
        ('monitoring/node_exporter_host.py', ('SERVICE_PROPERTIES',), _WORDS),
        ('monitoring/nvme_health.py', ('FIELDS',), _WORDS),
        ('monitoring/nvme_health.py', ('HELP', '_METRIC'), 'names and help texts of the collection\'s own metrics'),
        ('monitoring/prometheus_config.py', ('JOBS',), _OWN), ('monitoring/prometheus_config.py', ('_WILDCARD',), _SPEC),
        ('packages/apt_policy.py', ('_SKIP',), _WORDS), ('packages/apt_simulation.py', ('STATE_PATHS', '_SKIPPED'), _PATHS),
        ('packages/apt_sources.py', ('_FIELD_RE',), _SPEC),
        ('packages/cuda_repos.py', ('VARIABLES', 'PER_DISTRIBUTION', '_NOT_RETURNED'), _OWN),
        ('packages/dpkg_state.py', ('_OK_STATES',), _WORDS), ('packages/driver_branches.py', ('SOURCES',), _OWN),
        ('packages/driver_host.py', ('APT_DIRS', 'DPKG_LOCKS'), _PATHS), ('packages/driver_resolve.py', ('CUDA_VARS',), _OWN),
        ('packages/held_updates.py', ('NOT_CHECKED', 'TAKE'), _OWN),
        ('packages/mirror_urls.py', ('MIRRORED', 'NOT_MIRRORED'), _OWN),
        ('packages/nvidia_repo.py', ('DISABLED_STATES', 'ENABLED_STATES', 'RUNNING_STATES'), _WORDS),
        ('packages/pkgversion.py', ('BACKENDS',), _OWN), ('packages/repo_files.py', ('OPTIONS', 'MODULE_OPTIONS'), _OWN),
        ('packages/driver_module.py', ('ACTIONS', 'ARGUMENT_SPEC', 'CONFIG_FILES'), _OWN),
        ('packages/url_trust.py', ('KINDS', 'VARIABLES', '_SHA256_FORMS'), _OWN),
        ('packages/url_trust.py', ('_ALGORITHMS',), 'hex digest lengths of hash algorithms: ' + _SPEC),
        ('plan/adopt.py', ('ACTIONS', 'COMPONENTS', 'ORIGINS', 'SOURCES'), _OWN), ('plan/drain.py', ('_FALSE', '_TRUE'), _SPEC),
        ('plan/host_plan.py', ('PLAN_INPUTS', 'PUBLISHED'), _OWN), ('plan/options.py', ('OPTIONS', 'ROLES', '_CHOICES_AUTO'), _OWN),
        ('plan/reboot.py', ('ACTIONS',), _OWN),
        ('plan/rollback.py', ('DRAIN_STATES', 'EVENTS', 'HARDWARE_GROUPS', 'VERDICTS'), _OWN),
        ('plan/rollback.py', ('REBOOT_ACTIONS',), 'the names of Ansible\'s reboot action: ' + _OWN),
        ('probe/gpu_probe.py', ('NVIDIA_SMI_CHOICES', 'NVML_CHOICES'), _OWN),
        ('probe/nvidia_smi.py', ('_NOT_AVAILABLE',), _WORDS),
        ('probe/nvidia_topo.py', ('_AFFINITY_COLUMNS', '_NOT_AVAILABLE'), _WORDS),
        ('probe/nvidia_topo.py', ('_LEGEND_TEXT',), 'the legend the topo filter writes back, as nvidia-smi prints it: '
         + _WORDS),
        ('probe/nvml.py', ('DEFAULT_NVML_PATHS',), _PATHS), ('probe/nvml.py', ('_FIELD_ERRORS',), _WORDS),
        ('probe/packages.py', ('COMPONENTS', 'COMPONENT_UNITS', 'MARKER_PATHS'), 'the packages, pins and units the '
         'collection\'s own roles install, found again on a host: ' + _OWN),
        ('probe/pci.py', ('_DENIED', '_MISSING'), 'errno values the sysfs reader tells apart: ' + _SPEC),
        ('probe/runner.py', ('TIMEOUT_OPTIONS',), _OWN),
        ('python_env/python_stack.py', ('IMPORT_NAMES',), 'the import name of a PyPI distribution whose name differs, '
         'for the import check: ' + _SPEC),
        ('python_env/python_stack.py', ('TORCH_FAMILY',), _OWN), ('python_env/stack_fast_path.py', ('CHECKS',), _OWN),
        ('python_env/stack_host.py', ('ACTIONS',), _CODE),
        ('python_env/stack_inputs.py', ('EMPTY_MEANS_NONE', 'PATHS'), _OWN),
        ('python_env/stack_status.py', ('_UNSTABLE',), _OWN),
        ('validate/balance.py', ('ADVICE',), _POLICY), ('validate/balance.py', ('THRESHOLD_KEYS',), _OWN),
        ('validate/dcgm_diag.py', ('LEVELS',), _POLICY), ('validate/dcgm_diag.py', ('_STATUS',), _WORDS),
        ('validate/health.py', ('IDLE_THROTTLE_BAD',), _POLICY), ('validate/health.py', ('STATUSES',), _OWN),
        ('validate/inputs.py', ('BOUNDS',), _POLICY), ('validate/inputs.py', ('OPTIONAL_PATHS', 'PATHS'), _OWN),
        ('validate/inputs.py', ('_NEVER',), _PATHS), ('validate/measure.py', ('DTYPES',), _OWN),
        ('validate/measure.py', ('RESNET50_STAGES',), 'the ResNet-50 network layout (He et al. 2015, stages of 3, 4, 6 and '
         '3 blocks) the measurement builds, no vendor fact'),
        ('validate/node.py', ('_EXTRA_ENV',), _OWN),
        ('validate/data_path.py', ('FIO_JOBS',), 'the fio jobs the data check runs (block sizes the collection chose: '
         '1 MiB sequential, 128 KiB random - about one JPEG of ImageNet), no vendor fact'),
        ('validate/report_html.py', ('ORDER', 'COLOURS'), _OWN),
        ('bmc/recovery.py', ('TIMED_OUT',), _WORDS), ('bmc/sel.py', ('ADVICE',), _POLICY),
        ('bmc/sel.py', ('CATEGORY',), _OWN), ('bmc/devices.py', ('BMC_DEVICES',), _PATHS),
        ('core/value_kinds.py', ('NOTICES',), _OWN), ('core/value_numbers.py', ('_CLOCK_WHAT',), _OWN),
        ('packages/mirror_inputs.py', ('ARTIFACT_URL', 'CLASS_OF_KIND', 'KINDS', 'PLAYBOOK_VARIABLES', 'VARIABLES'),
         _OWN),
        ('packages/mirror_inputs.py', ('CARELESS',), 'careless values the bad-input suite replays, no vendor fact'),
        ('packages/mirror_inputs.py', ('_EVERY_HOST',), 'Ansible\'s implicit group names, no vendor fact'),
        ('python_env/requirements.py', ('_UNPINNED_OPTIONS',), 'pip requirements-file options that are not pins '
         '(a format fact), no vendor fact'),
        ('validate/observe.py', ('_RETIRE_CAUSES',), _WORDS),
        ('validate/perf.py', ('DEFAULT_THRESHOLDS',), _POLICY), ('validate/perf.py', ('METRICS',), _OWN),
        ('validate/report.py', ('RANK',), _OWN),
        ('validate/xid.py', ('ACTION_VERDICT', 'FAILING', 'RECOVERY_FAILING', 'VERDICT_TEXT'),
         'the collection\'s verdict per catalogue action (the actions are quoted with their source in XID_TABLE): '
         + _POLICY),
    ) for n in names])


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
                  'These tables decide too, but their rows do not carry a source and a read date yet (where a '
                  'source is named at all, it is in the file\'s comments): check them against their vendor before '
                  'trusting them.', '',
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


_TABLE_NAME = re.compile(r'_?[A-Z][A-Z0-9_]*')
_TABLE_TYPES = (dict, list, tuple, set, frozenset)


def module_tables(root=None):
    """(file, NAME) of every module-level table of plugins/module_utils: a name of capitals (a leading
    underscore allowed) that the module itself binds (an assignment at module level, not an import) to a
    dict, list, tuple, set or frozenset."""
    root = os.path.join(REPO, 'plugins', 'module_utils') if root is None else root
    found = []
    for folder, _dirs, files in sorted(os.walk(root)):
        for filename in sorted(files):
            if not filename.endswith('.py') or filename == '__init__.py':
                continue
            path = os.path.join(folder, filename)
            relative = os.path.relpath(path, REPO).replace(os.sep, '/')
            with open(path) as handle:
                tree = ast.parse(handle.read(), path)
            names = []
            for node in tree.body:
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
                names += [t.id for t in targets if isinstance(t, ast.Name) and _TABLE_NAME.fullmatch(t.id)]
            module = _module(_dotted(relative))
            for name in sorted(set(names)):
                if isinstance(getattr(module, name, None), _TABLE_TYPES):
                    found.append((relative, name))
    return found


def unclassified_tables(root=None, registered_tables=None):
    """(file, NAME) of every module-level table (module_tables()) that is neither registered (the table or
    the same object), nor DERIVED from one, nor PENDING, nor NOT_VENDOR: a table nobody has judged, which
    may be a vendor table without sources. A unit test keeps this empty."""
    entries = registered() if registered_tables is None else registered_tables
    known = set((entry[1], entry[2]) for entry in entries)
    same = set(id(getattr(_module(_dotted(entry[1])), entry[2], None)) for entry in entries)
    judged = known | set(DERIVED) | set((entry[0], entry[1]) for entry in PENDING) | set(NOT_VENDOR)
    return [(path, name) for path, name in module_tables(root)
            if (path, name) not in judged and id(getattr(_module(_dotted(path)), name)) not in same]


def derived_from(key):
    """(file, NAME) of the registered table DERIVED[key] is built from."""
    source = DERIVED[key]
    if ' ' in source:
        folder_file, name = source.split(' ', 1)
        return _M + folder_file, name
    return key[0], source


def stale_judgements():
    """Entries of DERIVED, PENDING and NOT_VENDOR that name no module-level table any more."""
    tables = set(module_tables())
    return sorted(key for key in set(DERIVED) | set((e[0], e[1]) for e in PENDING) | set(NOT_VENDOR)
                  if key not in tables)


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
