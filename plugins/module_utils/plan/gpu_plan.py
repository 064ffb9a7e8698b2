# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hardware gating: turn ``ansible_facts.gpuops_gpu`` into the plan every role follows.

This is the ONE place where the collection decides, from what the probe saw, whether a
host needs the NVIDIA driver, which kernel-module flavour, Fabric Manager, the NVLink
subnet manager, persistence, MIG, DCGM profiling and which roles run. Roles read the plan
(``gpuops.dlserver.gpu_plan`` filter) and never re-derive a decision with ``when:`` chains.

Pure functions, standard library only, Python 3.8+: a module may import this on a target.
The rules and their sources are in docs/hardware-gating.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_models import describe_gpu

PLAN_VERSION = 1

# ---------------------------------------------------------------------------------------
# Vendor facts, one row per GPU architecture (sources: docs/hardware-gating.md).
#   order        generation order, for "Volta and newer" style rules
#   open         NVIDIA's open kernel modules drive it (Turing and newer: they need the GSP)
#   proprietary  the proprietary kernel modules drive it (not Blackwell: open only)
#   min_branch   first driver branch this collection accepts for it (None: no floor)
#   max_branch   last driver branch that supports it (None: still supported)
# ---------------------------------------------------------------------------------------
ARCHITECTURES = {
    'kepler': {'order': 30, 'open': False, 'proprietary': True, 'min_branch': None, 'max_branch': 470},
    'maxwell': {'order': 50, 'open': False, 'proprietary': True, 'min_branch': None, 'max_branch': 580},
    'pascal': {'order': 60, 'open': False, 'proprietary': True, 'min_branch': None, 'max_branch': 580},
    'volta': {'order': 70, 'open': False, 'proprietary': True, 'min_branch': None, 'max_branch': 580},
    'turing': {'order': 75, 'open': True, 'proprietary': True, 'min_branch': None, 'max_branch': None},
    'ampere': {'order': 80, 'open': True, 'proprietary': True, 'min_branch': None, 'max_branch': None},
    'ada': {'order': 89, 'open': True, 'proprietary': True, 'min_branch': 525, 'max_branch': None},
    'hopper': {'order': 90, 'open': True, 'proprietary': True, 'min_branch': 525, 'max_branch': None},
    'blackwell': {'order': 100, 'open': True, 'proprietary': False, 'min_branch': 570, 'max_branch': None},
}
UNKNOWN_ARCH = 'unknown'

# Open kernel modules were first published with the R515 branch; R560 made them the default.
OPEN_MODULES_FIRST_BRANCH = 515
OPEN_MODULES_DEFAULT_BRANCH = 560
# Before R545 the open modules were production quality on data-centre GPUs only: on GeForce
# and workstation GPUs they were alpha and refused to load without this module parameter.
OPEN_MODULES_ALL_GPUS_BRANCH = 545
OPEN_MODULES_UNSUPPORTED_PARAMETER = 'NVreg_OpenRmEnableUnsupportedGpus=1'
# A GPU no table can name but whose PCI device id is Turing-or-newer is new silicon: it gets
# the open modules (the only ones for Blackwell and newer) and a branch at least this new
# (the newest branch the collection's table has a floor for: B300/GB300).
UNKNOWN_GPU_MIN_BRANCH = 580
# DCGM profiling (DCP) metrics: data-centre GPUs, Volta and newer.
PROFILING_MIN_ORDER = ARCHITECTURES['volta']['order']
# NVLink subnet manager: fourth-generation NVSwitch systems (NVLink 5, HGX/DGX B200 and later).
NVLSM_MIN_NVSWITCH_GENERATION = 4
NVLSM_MIN_ORDER = ARCHITECTURES['blackwell']['order']

ROLES = (
    'os_tuning', 'nvidia_driver', 'cuda_toolkit', 'nvidia_container_toolkit', 'python_stack',
    'node_exporter', 'dcgm_exporter', 'prometheus', 'volcano', 'gpu_validate',
)

_CHOICES_AUTO = ('auto', 'enabled', 'disabled')

# Options of build_plan(): type, default, choices, and the public role variable a user
# changes to set it (named in every error message).
OPTIONS = {
    'driver_force': {'type': 'bool', 'default': False, 'variable': 'nvidia_driver_force'},
    'kernel_modules': {'type': 'choice', 'default': 'auto', 'choices': ('auto', 'open', 'proprietary'),
                       'variable': 'nvidia_driver_kernel_modules'},
    'driver_branch': {'type': 'branch', 'default': None, 'variable': 'nvidia_driver_branch'},
    'mig': {'type': 'choice', 'default': 'auto', 'choices': _CHOICES_AUTO, 'variable': 'nvidia_driver_mig_mode'},
    'dcgm_profiling': {'type': 'choice', 'default': 'auto', 'choices': _CHOICES_AUTO,
                       'variable': 'dcgm_exporter_profiling'},
    'in_container': {'type': 'bool', 'default': False,
                     'variable': 'in_container (roles derive it from ansible_virtualization_type)'},
    'persistence': {'type': 'bool', 'default': True, 'variable': 'nvidia_driver_persistence'},
    'strict': {'type': 'bool', 'default': True, 'variable': 'the strict option of the gpu_plan filter'},
}

_TRUE = ('true', 'yes', 'on', '1', 'y')
_FALSE = ('false', 'no', 'off', '0', 'n')
_BRANCH_RE = re.compile(r'^[rR]?(\d{3,4})$')


def _variable(option):
    return OPTIONS[option]['variable']


def _to_bool(name, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    raise ValueError("plan option '%s' (variable %s) must be a boolean (true or false), got %r"
                     % (name, _variable(name), value))


def parse_branch(value, name='driver_branch'):
    """Return a driver branch as an int (580 from 580, '580' or 'R580'); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        pass  # bool is an int subclass; never a branch
    elif isinstance(value, int):
        if 100 <= value <= 9999:
            return value
    elif isinstance(value, str):
        match = _BRANCH_RE.match(value.strip())
        if match:
            return int(match.group(1))
    raise ValueError("plan option '%s' (variable %s) must be a driver branch number such as 580 "
                     "(an integer or a string of 3-4 digits, optionally prefixed with R), got %r"
                     % (name, _variable(name), value))


def branch_of_version(version):
    """Driver branch (int) of a driver version string ('580.95.05' -> 580); None when unknown."""
    if version is None:
        return None
    match = re.match(r'^\s*(\d+)', str(version))
    return int(match.group(1)) if match else None


def validate_plan_options(options):
    """Validate and normalise build_plan() options; return a new dict with every option set.

    Raises ValueError naming the option, its role variable and the allowed values for an
    unknown option, a value of the wrong type or a choice outside the allowed ones.
    ``None`` for an option means its default.
    """
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ValueError('plan options must be a dictionary, got %s' % type(options).__name__)
    unknown = sorted(str(k) for k in options if k not in OPTIONS)
    if unknown:
        raise ValueError('unknown plan option(s) %s; allowed options: %s'
                         % (', '.join(unknown), ', '.join(sorted(OPTIONS))))
    result = {}
    for name in sorted(OPTIONS):
        spec = OPTIONS[name]
        value = options.get(name)
        if value is None:
            result[name] = spec['default']
        elif spec['type'] == 'bool':
            result[name] = _to_bool(name, value)
        elif spec['type'] == 'branch':
            result[name] = parse_branch(value, name)
        else:
            if not isinstance(value, str) or value.strip().lower() not in spec['choices']:
                raise ValueError("plan option '%s' (variable %s) must be one of %s, got %r"
                                 % (name, spec['variable'], ', '.join(spec['choices']), value))
            result[name] = value.strip().lower()
    return result


# ---------------------------------------------------------------------------------------
# Facts
# ---------------------------------------------------------------------------------------

def _int_or_none(value):
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        try:
            return int(float(str(value).strip()))
        except ValueError:
            return None


def _count(facts, key, fallback):
    value = facts.get(key)
    if value is None:
        return fallback
    number = _int_or_none(value)
    if number is None or number < 0:
        raise ValueError('gpuops_gpu.%s must be a non-negative integer, got %r' % (key, value))
    return number


def _gpu_label(gpu):
    name = gpu.get('name')
    bus = gpu.get('pci_bus_id') or '?'
    return '%s (%s)' % (bus, name) if name else bus


def _normalise_gpus(facts, warnings):
    gpus = facts.get('gpus')
    if gpus is None:
        gpus = []
    if not isinstance(gpus, list):
        raise ValueError('gpuops_gpu.gpus must be a list, got %s' % type(gpus).__name__)
    result = []
    for index, gpu in enumerate(gpus):
        if not isinstance(gpu, dict):
            raise ValueError('gpuops_gpu.gpus[%d] must be a dictionary, got %s' % (index, type(gpu).__name__))
        arch = gpu.get('architecture')
        arch = str(arch).strip().lower() if arch is not None else UNKNOWN_ARCH
        if arch not in ARCHITECTURES and arch != UNKNOWN_ARCH:
            warnings.append(_entry('architecture_unrecognised',
                                   'GPU %s reports architecture %r, which this plan does not know; '
                                   'treated as unknown' % (_gpu_label(gpu), gpu.get('architecture')),
                                   pci_bus_id=gpu.get('pci_bus_id')))
            arch = UNKNOWN_ARCH
        entry = dict(gpu)
        entry['architecture'] = arch
        _add_model(entry)
        result.append(entry)
    return result


def _add_model(entry):
    """Per-GPU vendor facts from the collection's table (gpu_models.KNOWN_GPUS), by device id.

    Keys the probe already put in the facts win; the table fills what older facts lack, so
    the plan and the probe judge a GPU by the same row.
    """
    model = describe_gpu(entry.get('pci_device_id')) if entry.get('pci_device_id') is not None else {}
    known = model.get('known', False)
    for key in ('segment', 'min_branch', 'min_version', 'imex', 'nvswitch_baseboard'):
        if entry.get(key) is None:
            entry[key] = model.get(key) if known else None
    if entry.get('proprietary_supported') is None:
        entry['proprietary_supported'] = model.get('proprietary_supported') if known else None
    if entry.get('segment') is None and entry.get('datacenter') is True:
        entry['segment'] = 'datacenter'
    if entry.get('model_name') is None:
        entry['model_name'] = entry.get('name') or (model.get('name') if known else None)
    entry['id_generation'] = entry.get('id_generation') or model.get('id_generation')
    # an unknown GPU whose id is Turing-or-newer (or that has no id at all) is treated as new silicon
    entry['new_silicon'] = entry['architecture'] == UNKNOWN_ARCH and entry['id_generation'] != 'pre_turing'


def _entry(code, message, **extra):
    item = {'code': code, 'message': message}
    for key, value in extra.items():
        if value is not None:
            item[key] = value
    return item


def _error(code, option, message):
    return {'code': code, 'option': option, 'variable': _variable(option), 'message': message}


def _arch_list(archs):
    return ', '.join(sorted(archs, key=lambda a: ARCHITECTURES.get(a, {'order': 999})['order']))


def _profiling_supported(gpu):
    info = ARCHITECTURES.get(gpu['architecture'])
    return bool(info and info['order'] >= PROFILING_MIN_ORDER
                and (gpu.get('datacenter') is True or gpu.get('segment') == 'workstation'))


def _open_capable(gpu):
    info = ARCHITECTURES.get(gpu['architecture'])
    if info is None:
        return gpu.get('new_silicon', False)
    return info['open']


def fabric_evidence(facts, gpus=None):
    """What says this host has an NVSwitch fabric, from every depth of the probe.

    ``nvswitches``: NVSwitch PCI functions (NVLink 3/4: HGX A100/H100);
    ``mgmt_nics``: bus ids of ConnectX-7 switch-management functions (VPD SW_MNG, NVLink 5:
    HGX/DGX B200, B300); ``nvml_switch_links``: active NVLinks whose remote device type is
    "switch"; ``vpd_unreadable``: ConnectX-7 functions whose VPD could not be read.
    """
    facts = facts or {}
    if gpus is None:
        gpus = _normalise_gpus(facts, [])
    fabric = facts.get('nvlink_fabric') if isinstance(facts.get('nvlink_fabric'), dict) else {}
    mgmt = []
    for nic in facts.get('nvswitch_mgmt_nics') or []:
        bus = nic.get('pci_bus_id') if isinstance(nic, dict) else nic
        if bus:
            mgmt.append(bus)
    for nic in facts.get('nics') or []:
        if isinstance(nic, dict) and nic.get('nvlink_switch_mgmt') is True and nic.get('pci_bus_id') not in mgmt:
            mgmt.append(nic.get('pci_bus_id'))
    links = _int_or_none(fabric.get('nvml_switch_links'))
    if links is None:
        counted = [1 for g in gpus for link in (g.get('nvlinks') or ())
                   if isinstance(link, dict) and link.get('active') and link.get('remote_type') == 'switch']
        links = len(counted) if counted else None
    return {
        'nvswitches': _count(facts, 'nvswitch_count', len(facts.get('nvswitches') or [])),
        'mgmt_nics': sorted(mgmt),
        'nvml_switch_links': links or 0,
        'vpd_unreadable': list(fabric.get('vpd_unreadable') or []),
        'baseboard_gpus': [g.get('pci_bus_id') for g in gpus if g.get('nvswitch_baseboard')],
    }


def capabilities_from_facts(facts):
    """The contract's ``capabilities`` block, computed by the same rules as the plan.

    The probe may call this so that its summary and the plan never disagree.
    """
    gpus = _normalise_gpus(facts or {}, [])
    evidence = fabric_evidence(facts, gpus)
    return {
        'fabric_manager_required': bool(gpus) and bool(
            evidence['nvswitches'] or evidence['mgmt_nics'] or evidence['nvml_switch_links']
            or (evidence['baseboard_gpus'] and evidence['vpd_unreadable'])),
        'open_kernel_modules_supported': bool(gpus) and all(_open_capable(g) for g in gpus),
        'mig_capable': any(g.get('mig_capable') is True for g in gpus),
        'dcgm_profiling_supported': any(_profiling_supported(g) for g in gpus),
    }


# ---------------------------------------------------------------------------------------
# Decisions
# ---------------------------------------------------------------------------------------

def _decide_driver(ctx):
    opts = ctx['options']
    gpu_count = ctx['gpu_count']
    if gpu_count > 0:
        required = True
        reason = '%d NVIDIA GPU(s) found (%s)' % (gpu_count, _arch_list(ctx['archs']) or 'architecture unknown')
        if opts['driver_force']:
            reason += '; nvidia_driver_force is set as well'
    elif opts['driver_force']:
        required = True
        reason = 'no NVIDIA GPU found, but nvidia_driver_force is true: install anyway'
    else:
        required = False
        reason = 'no NVIDIA GPU found on PCI; set nvidia_driver_force: true to install the driver anyway'

    branch_min, branch_max, branch_reason, branch_min_version = _branch_range(ctx)
    requested = opts['driver_branch']

    modules, modules_reason = _decide_modules(ctx, required, requested)

    if not required:
        branch = {'value': requested, 'min': None, 'max': None, 'min_version': None,
                  'reason': 'no driver is installed on this host, so the branch is not checked'}
    else:
        branch = _decide_branch(ctx, requested, branch_min, branch_max, branch_reason, modules,
                                branch_min_version)

    if not required:
        load = (False, 'no driver is installed on this host')
    elif opts['in_container']:
        load = (False, 'running in a container: the kernel belongs to the host, so no kernel module is '
                       'built or loaded here (packages only)')
    else:
        load = (True, 'bare metal or VM: the kernel modules are built for and loaded into this kernel')

    loaded = ctx['driver_facts'].get('loaded') is True
    loaded_version = ctx['driver_facts'].get('version')
    loaded_branch = branch_of_version(loaded_version) if loaded else None
    if required and loaded_branch is not None and branch['value'] is not None \
            and loaded_branch != branch['value']:
        ctx['warnings'].append(_entry(
            'driver_branch_change',
            'driver %s (branch %d) is loaded, the plan installs branch %d: the driver changes and the host '
            'needs a reboot' % (loaded_version, loaded_branch, branch['value'])))
    return {
        'required': required,
        'reason': reason,
        'kernel_modules': {'value': modules, 'reason': modules_reason},
        'branch': branch,
        'load_modules': {'value': load[0], 'reason': load[1]},
        'loaded': {'value': loaded, 'version': loaded_version if loaded else None, 'branch': loaded_branch},
    }


def _gpu_model_label(gpu):
    name = gpu.get('model_name') or 'GPU'
    if not name.startswith('NVIDIA '):
        name = 'NVIDIA ' + name
    return '%s (%s, device %s)' % (name, gpu.get('pci_bus_id') or '?', gpu.get('pci_device_id') or '?')


def _branch_range(ctx):
    """(min, max, reason, min_version): the branch range every GPU of the host accepts.

    Floors come from each architecture and from each GPU's own row (a GPU newer than its
    architecture's first branch, e.g. H200 needs R550); an unknown new GPU asks for
    UNKNOWN_GPU_MIN_BRANCH.
    """
    lows, highs = [], []
    for arch in ctx['known_archs']:
        info = ARCHITECTURES[arch]
        if info['min_branch'] is not None:
            lows.append((info['min_branch'], arch, None))
        if info['max_branch'] is not None:
            highs.append((info['max_branch'], arch))
    seen = set()
    for gpu in ctx['gpus']:
        floor = _int_or_none(gpu.get('min_branch'))
        label = None
        if floor is not None:
            label = '%s' % _gpu_model_label(gpu)
        elif gpu.get('new_silicon'):
            floor, label = UNKNOWN_GPU_MIN_BRANCH, 'GPU %s of unknown model (device %s, new silicon)' % (
                gpu.get('pci_bus_id') or '?', gpu.get('pci_device_id') or '?')
        if floor is not None and (floor, gpu.get('pci_device_id')) not in seen:
            seen.add((floor, gpu.get('pci_device_id')))
            lows.append((floor, label, gpu.get('min_version')))
    low = max(lows, key=lambda item: item[0]) if lows else None
    high = min(highs) if highs else None
    parts = []
    min_version = None
    if low:
        versions = sorted(set(v for b, dummy, v in lows if b == low[0] and v))
        min_version = versions[-1] if versions else None
        parts.append('%s needs branch %d or newer%s' % (
            low[1], low[0], ' (%s or later)' % min_version if min_version else ''))
    if high:
        parts.append('%s is supported up to branch %d' % (high[1], high[0]))
    return (low[0] if low else None), (high[0] if high else None), '; '.join(parts), min_version


def _decide_branch(ctx, requested, low, high, range_reason, modules, min_version=None):
    errors = ctx['errors']
    if low is not None and high is not None and low > high:
        errors.append(_error('no_common_branch', 'driver_branch',
                             'no driver branch supports every GPU of this host (%s): %s. Split the GPUs '
                             'across hosts; no value of nvidia_driver_branch can work' % (
                                 _arch_list(ctx['known_archs']), range_reason)))
    if requested is None:
        value = high  # the last branch for legacy GPUs, else the role's default applies
        if high is not None:
            reason = ('nvidia_driver_branch not set: branch %d, the newest that supports every GPU here (%s)'
                      % (high, range_reason))
        else:
            reason = 'nvidia_driver_branch not set: the role default applies'
            if range_reason:
                reason += ' (%s)' % range_reason
    else:
        value = requested
        reason = 'branch %d from nvidia_driver_branch' % requested
        if low is not None and requested < low:
            errors.append(_error('branch_too_old', 'driver_branch',
                                 'driver branch %d is too old for this host: %s. Set nvidia_driver_branch '
                                 'to %d or newer' % (requested, range_reason, low)))
        if high is not None and requested > high:
            errors.append(_error('branch_too_new', 'driver_branch',
                                 'driver branch %d no longer supports this host: %s. Set '
                                 'nvidia_driver_branch to %d or older' % (requested, range_reason, high)))
        if range_reason:
            reason += ' (%s)' % range_reason
    if ctx['has_unknown']:
        reason += '; GPUs of unknown architecture cannot be checked against the branch'
    if modules == 'open' and value is not None and value < OPEN_MODULES_FIRST_BRANCH:
        errors.append(_error('open_modules_branch', 'driver_branch',
                             'open kernel modules exist from branch %d on; branch %d has none. Set '
                             'nvidia_driver_branch to %d or newer, or nvidia_driver_kernel_modules: '
                             'proprietary where the GPUs allow it' % (
                                 OPEN_MODULES_FIRST_BRANCH, value, OPEN_MODULES_FIRST_BRANCH)))
    return {'value': value, 'min': low, 'max': high, 'min_version': min_version if low is not None else None,
            'reason': reason}


def _decide_modules(ctx, required, branch):
    choice = ctx['options']['kernel_modules']
    errors = ctx['errors']
    known = ctx['known_archs']
    gpus = ctx['gpus']
    # what needs the open modules: Blackwell (architecture), GH200 (its own row), new silicon
    need_open = [a for a in sorted(known, key=lambda x: ARCHITECTURES[x]['order'])
                 if not ARCHITECTURES[a]['proprietary']]
    need_open += sorted(set(_gpu_model_label(g) for g in gpus
                            if g.get('proprietary_supported') is False and ARCHITECTURES.get(
                                g['architecture'], {}).get('proprietary', True)))
    new_silicon = [g for g in gpus if g.get('new_silicon')]
    old_unknown = [g for g in gpus if g['architecture'] == UNKNOWN_ARCH and not g.get('new_silicon')]
    need_prop = sorted(a for a in known if not ARCHITECTURES[a]['open'])
    # GeForce/workstation GPUs on a branch whose open modules were alpha for them
    early = branch is not None and branch < OPEN_MODULES_ALL_GPUS_BRANCH
    alpha = [g for g in gpus if early and _open_capable(g) and g.get('segment') != 'datacenter']
    alpha_note = ('open kernel modules before branch %d were alpha quality on GeForce and workstation GPUs '
                  '(%s) and load there only with the module parameter %s'
                  % (OPEN_MODULES_ALL_GPUS_BRANCH, ', '.join(sorted(set(_gpu_model_label(g) for g in alpha))),
                     OPEN_MODULES_UNSUPPORTED_PARAMETER)) if alpha else ''
    if not required:
        return None, 'no driver is installed on this host'

    unknown_note = ''
    if old_unknown:
        unknown_note = ('; %d GPU(s) of unknown architecture cannot be checked against this choice'
                        % len(old_unknown))

    if choice != 'auto':
        reason = '%s kernel modules, set by nvidia_driver_kernel_modules' % choice
        if choice == 'proprietary' and need_open:
            errors.append(_error('kernel_modules_conflict', 'kernel_modules',
                                 '%s GPUs are driven by the open kernel modules only; set '
                                 'nvidia_driver_kernel_modules to open or auto (it is proprietary)'
                                 % ', '.join(need_open)))
            reason += ', which %s GPUs do not support' % ', '.join(need_open)
        if choice == 'proprietary' and new_silicon:
            ctx['warnings'].append(_entry(
                'unknown_gpu_proprietary',
                'proprietary kernel modules forced on %d GPU(s) no table names but whose device id is Turing or '
                'newer: Blackwell and newer GPUs run the open modules only' % len(new_silicon)))
        if choice == 'open' and need_prop:
            errors.append(_error('kernel_modules_conflict', 'kernel_modules',
                                 'the open kernel modules need the GSP of Turing and newer GPUs; %s GPUs need '
                                 'the proprietary ones: set nvidia_driver_kernel_modules to proprietary or auto '
                                 '(it is open)' % _arch_list(need_prop)))
            reason += ', which %s GPUs do not support' % _arch_list(need_prop)
        if choice == 'open' and alpha:
            errors.append(_error('open_modules_alpha', 'kernel_modules',
                                 'nvidia_driver_kernel_modules is open with branch %d: %s. The collection does '
                                 'not set that parameter; set nvidia_driver_branch to %d or newer, or '
                                 'nvidia_driver_kernel_modules to proprietary or auto'
                                 % (branch, alpha_note, OPEN_MODULES_ALL_GPUS_BRANCH)))
            reason += '; %s' % alpha_note
        return choice, reason + unknown_note

    if need_open and need_prop:
        errors.append(_error('kernel_modules_conflict', 'kernel_modules',
                             'no kernel-module flavour drives every GPU of this host: %s need the open '
                             'modules, %s the proprietary ones. No value of nvidia_driver_kernel_modules can '
                             'work; split the GPUs across hosts' % (', '.join(need_open), _arch_list(need_prop))))
        return None, 'no flavour fits: %s need open, %s need proprietary' % (
            ', '.join(need_open), _arch_list(need_prop))
    if need_open:
        reason = '%s GPUs are supported by the open kernel modules only' % ', '.join(need_open)
        return 'open', reason + unknown_note
    if need_prop:
        return 'proprietary', ('%s GPUs predate Turing: they have no GSP, which the open kernel modules need; '
                               'NVIDIA keeps the proprietary modules for them (and for hosts mixing them with '
                               'newer GPUs)' % _arch_list(need_prop))
    if old_unknown:
        return 'proprietary', (
            '%d GPU(s) of unknown architecture whose PCI device id is older than Turing\'s (below 0x%04x): '
            'not guessing open. The proprietary modules drive every architecture from Maxwell to Hopper; '
            'if these are Turing or newer, set nvidia_driver_kernel_modules: open'
            % (len(old_unknown), 0x1E00))
    if alpha:
        return 'proprietary', alpha_note + ': the proprietary modules are the production ones there'
    if new_silicon and not known:
        ctx['warnings'].append(_entry(
            'unknown_gpu_new_silicon',
            '%d GPU(s) no table names (device %s) have a Turing-or-newer device id: treated as new silicon, '
            'open kernel modules and branch %d or newer; add the id to gpu_models.KNOWN_GPUS'
            % (len(new_silicon), ', '.join(sorted(set(str(g.get('pci_device_id')) for g in new_silicon))),
               UNKNOWN_GPU_MIN_BRANCH)))
        return 'open', ('%d GPU(s) of unknown model with a Turing-or-newer device id: the safe choice for new '
                        'silicon is the open kernel modules (the only ones for Blackwell and newer)'
                        % len(new_silicon))
    if not known:
        # forced install on a host without GPUs: follow the branch's own default flavour
        if branch is not None and branch < OPEN_MODULES_DEFAULT_BRANCH:
            return 'proprietary', ('no GPU to decide from: branch %d installs the proprietary modules by '
                                   'default (open became the default with branch %d)'
                                   % (branch, OPEN_MODULES_DEFAULT_BRANCH))
        return 'open', ('no GPU to decide from: NVIDIA\'s default flavour since branch %d, and the only one '
                        'for Blackwell and newer' % OPEN_MODULES_DEFAULT_BRANCH)
    if branch is not None and branch < OPEN_MODULES_FIRST_BRANCH:
        return 'proprietary', ('%s GPUs would take the open modules, but branch %d predates them (first in %d)'
                               % (_arch_list(known), branch, OPEN_MODULES_FIRST_BRANCH))
    if new_silicon:
        ctx['warnings'].append(_entry(
            'unknown_gpu_new_silicon',
            '%d GPU(s) no table names have a Turing-or-newer device id: treated as new silicon (open kernel '
            'modules, branch %d or newer)' % (len(new_silicon), UNKNOWN_GPU_MIN_BRANCH)))
    return 'open', ('%s GPUs are Turing or newer: NVIDIA recommends the open kernel modules for them '
                    '(the default since branch %d)' % (_arch_list(known), OPEN_MODULES_DEFAULT_BRANCH))


def _nvswitch_generations(facts):
    gens = []
    for switch in facts.get('nvswitches') or []:
        if isinstance(switch, dict):
            gen = _int_or_none(switch.get('generation'))
            if gen is not None:
                gens.append(gen)
    return gens


def _decide_fabric(ctx, driver):
    facts = ctx['facts']
    evidence = ctx['fabric']
    nvswitches = evidence['nvswitches']
    mgmt = evidence['mgmt_nics']
    links = evidence['nvml_switch_links']
    load = driver['load_modules']['value']
    found = []
    if nvswitches:
        found.append('%d NVSwitch(es) on PCI' % nvswitches)
    if mgmt:
        found.append('%d NVLink switch-management function(s) (ConnectX-7 with SW_MNG in its VPD: %s)'
                     % (len(mgmt), ', '.join(mgmt)))
    if links:
        found.append('%d active NVLink(s) ending at a switch (NVML)' % links)
    unconfirmed = not found and evidence['baseboard_gpus'] and evidence['vpd_unreadable']
    if unconfirmed:
        found.append('%d GPU(s) that exist only on NVSwitch baseboards (%s), and the VPD of %d ConnectX-7 '
                     'function(s) could not be read to confirm the switch trays'
                     % (len(evidence['baseboard_gpus']), ', '.join(evidence['baseboard_gpus']),
                        len(evidence['vpd_unreadable'])))
        ctx['warnings'].append(_entry(
            'nvlink5_unconfirmed',
            'NVLink 5 switch trays not confirmed: the ConnectX-7 VPD could not be read (run gpu_facts as root); '
            'Fabric Manager and NVLSM are planned because %s are NVSwitch-baseboard GPUs'
            % ', '.join(evidence['baseboard_gpus'])))
    elif not found and evidence['baseboard_gpus'] and ctx['gpu_count']:
        ctx['warnings'].append(_entry(
            'nvswitch_baseboard_without_switch',
            'GPU(s) %s exist only on NVSwitch baseboards, but no NVSwitch, no switch-management function and '
            'no switch NVLink was found (GPUs passed through to a VM?): Fabric Manager is not planned'
            % ', '.join(evidence['baseboard_gpus'])))
    detected = {'nvswitches': nvswitches, 'mgmt_nics': mgmt, 'nvml_switch_links': links}
    if not found:
        fm = {'required': False, 'start': False, 'detected_by': [],
              'reason': 'no NVSwitch fabric: no NVSwitch on PCI, no NVLink switch-management function, no NVLink '
                        'to a switch; GPUs talk over PCIe or direct NVLink bridges'}
        nvlsm = {'required': False, 'start': False, 'mgmt_nics': [], 'reason': 'no NVSwitch fabric'}
        return fm, nvlsm
    if not driver['required']:
        ctx['warnings'].append(_entry('nvswitch_without_gpus',
                                      'an NVSwitch fabric (%s) but no GPU: GPUs may have fallen off the bus'
                                      % '; '.join(found)))
        reason = 'NVSwitch fabric (%s) but no driver is installed on this host' % '; '.join(found)
        return ({'required': False, 'start': False, 'detected_by': found, 'reason': reason},
                {'required': False, 'start': False, 'mgmt_nics': mgmt, 'reason': reason})
    fm_reason = ('%s: Fabric Manager must configure the NVLink fabric before CUDA can use the GPUs (CUDA error '
                 '802 "system not yet initialized" otherwise); installed at exactly the driver version'
                 % '; '.join(found))
    start_note = '' if load else '; not started: the kernel module is not loaded here'
    fm = {'required': True, 'start': load, 'detected_by': found, 'reason': fm_reason + start_note}

    gens = _nvswitch_generations(facts)
    new_archs = sorted(a for a in ctx['known_archs'] if ARCHITECTURES[a]['order'] >= NVLSM_MIN_ORDER)
    if mgmt or unconfirmed:
        required = True
        reason = ('NVLink 5 system: the NVSwitch trays are reached through ConnectX-7 switch-management '
                  'functions, which the NVLink subnet manager (NVLSM) programs; Fabric Manager needs it '
                  '(it needs the ib_umad kernel module and the InfiniBand diagnostics)')
    elif gens:
        required = max(gens) >= NVLSM_MIN_NVSWITCH_GENERATION
        if required:
            verdict = 'fourth-generation NVSwitches (NVLink 5) need the NVLink subnet manager next to Fabric Manager'
        else:
            verdict = 'before the fourth generation, Fabric Manager alone configures the fabric'
        reason = 'NVSwitch generation %d: %s' % (max(gens), verdict)
    elif new_archs:
        required = True
        reason = ('%s GPUs on NVSwitches: fourth-generation NVSwitch systems (HGX/DGX B200 and later) need the '
                  'NVLink subnet manager (NVLSM) next to Fabric Manager' % _arch_list(new_archs))
    elif ctx['known_archs']:
        required = False
        reason = ('%s GPUs on NVSwitches: NVSwitch generations before the fourth (HGX A100/H100) need Fabric '
                  'Manager only' % _arch_list(ctx['known_archs']))
    else:
        required = True
        reason = ('NVSwitches with GPUs of unknown architecture: the NVSwitch generation cannot be told, so '
                  'NVLSM is installed: without it a fourth-generation fabric never comes up, and on older '
                  'fabrics the Fabric Manager start script does not start it')
        ctx['warnings'].append(_entry('nvswitch_generation_unknown',
                                      'NVSwitch generation unknown (GPU architecture unknown): NVLSM installed '
                                      'as a precaution'))
    nvlsm = {'required': required, 'start': required and load, 'mgmt_nics': mgmt,
             'reason': reason + (start_note if required else '')}
    del detected
    return fm, nvlsm


def _decide_imex(ctx, driver):
    trays = [g for g in ctx['gpus'] if g.get('imex')]
    if not trays:
        return {'required': False, 'gpus': [],
                'reason': 'no Grace Blackwell NVL tray GPU (GB200, GB300): no multi-node NVLink domain to '
                          'export memory across'}
    labels = sorted(set(_gpu_model_label(g) for g in trays))
    if not driver['required']:
        return {'required': False, 'gpus': [g.get('pci_bus_id') for g in trays],
                'reason': 'Grace Blackwell GPUs, but no driver is installed on this host'}
    return {'required': True, 'gpus': [g.get('pci_bus_id') for g in trays],
            'reason': ('%s: GB200/GB300 NVL trays share GPU memory across the rack\'s NVLink domain through the '
                       'IMEX daemon (nvidia-imex, same version as the driver); this collection does not install '
                       'it yet' % ', '.join(labels))}


def _decide_persistence(ctx, driver):
    if not driver['required']:
        return {'enabled': False, 'start': False, 'reason': 'no driver is installed on this host'}
    if not ctx['options']['persistence']:
        return {'enabled': False, 'start': False,
                'reason': 'nvidia_driver_persistence is false: GPUs are torn down when the last client exits'}
    load = driver['load_modules']['value']
    reason = ('nvidia-persistenced keeps the GPUs initialised between jobs (no re-initialisation delay, '
              'settings such as power limits and MIG stay applied)')
    if not load:
        reason += '; enabled but not started: the kernel module is not loaded here'
    return {'enabled': True, 'start': load, 'reason': reason}


def _decide_mig(ctx, driver):
    gpus = ctx['gpus']
    mode = ctx['options']['mig']
    capable = [g.get('pci_bus_id') for g in gpus if g.get('mig_capable') is True]
    unknown = [g.get('pci_bus_id') for g in gpus if g.get('mig_capable') is None]
    load = driver['load_modules']['value']
    if mode == 'auto':
        reason = ('nvidia_driver_mig_mode is auto: the MIG mode of %d capable GPU(s) is left as it is'
                  % len(capable)) if capable else 'no MIG-capable GPU; MIG mode is not touched'
        return {'capable_gpus': capable, 'mode': None, 'apply_to': [], 'apply': False, 'reason': reason}
    if not capable and mode == 'disabled':
        return {'capable_gpus': [], 'mode': None, 'apply_to': [], 'apply': False,
                'reason': 'nvidia_driver_mig_mode is disabled and no GPU is MIG-capable: nothing to disable'}
    if not capable:
        detail = ('no GPU of this host is MIG-capable (MIG: A100, A30, H100, H200, B200 class data-centre GPUs '
                  'and RTX PRO 6000/5000/4500 Blackwell)')
        if unknown:
            detail += '; MIG capability of %d GPU(s) is unknown until the driver answers' % len(unknown)
        ctx['errors'].append(_error('mig_not_capable', 'mig',
                                    'MIG mode %s was asked for, but %s. Set nvidia_driver_mig_mode: auto for this '
                                    'host' % (mode, detail)))
        return {'capable_gpus': [], 'mode': mode, 'apply_to': [], 'apply': False,
                'reason': 'MIG %s asked for, but %s' % (mode, detail)}
    reason = 'MIG mode %s on %d MIG-capable GPU(s)' % (mode, len(capable))
    others = len(gpus) - len(capable)
    if others:
        reason += '; %d other GPU(s) are not MIG-capable and are left alone' % others
    if not load:
        reason += '; not applied now: the kernel module is not loaded here'
    return {'capable_gpus': capable, 'mode': mode, 'apply_to': capable, 'apply': load, 'reason': reason}


def _decide_dcgm(ctx):
    gpus = ctx['gpus']
    mode = ctx['options']['dcgm_profiling']
    if gpus or ctx['gpu_count']:
        exporter = {'value': True, 'reason': 'NVIDIA GPU(s) present: DCGM exporter publishes their metrics'}
    else:
        exporter = {'value': False, 'reason': 'no NVIDIA GPU: nothing for DCGM to watch'}
    supported = [g.get('pci_bus_id') for g in gpus if _profiling_supported(g)]
    lacking = [g for g in gpus if not _profiling_supported(g)]
    why_not = []
    for gpu in lacking:
        info = ARCHITECTURES.get(gpu['architecture'])
        if info is None:
            why_not.append('%s: architecture unknown' % _gpu_label(gpu))
        elif info['order'] < PROFILING_MIN_ORDER:
            why_not.append('%s: %s predates Volta' % (_gpu_label(gpu), gpu['architecture']))
        elif gpu.get('datacenter') is None and gpu.get('segment') is None:
            why_not.append('%s: not known to be a data-centre or workstation GPU' % _gpu_label(gpu))
        else:
            why_not.append('%s: a GeForce GPU, neither data-centre nor workstation' % _gpu_label(gpu))
    rule = 'DCGM profiling (DCP) metrics exist on data-centre and workstation (RTX/Quadro) GPUs of Volta and newer'
    if mode == 'disabled':
        profiling = {'value': False, 'supported_gpus': supported,
                     'reason': 'dcgm_exporter_profiling is disabled'}
    elif not exporter['value']:
        if mode == 'enabled':
            ctx['errors'].append(_error('profiling_not_supported', 'dcgm_profiling',
                                        'DCGM profiling was enabled, but this host has no NVIDIA GPU. Set '
                                        'dcgm_exporter_profiling: auto'))
        profiling = {'value': False, 'supported_gpus': [], 'reason': 'no NVIDIA GPU'}
    elif not supported:
        reason = '%s; none here (%s)' % (rule, '; '.join(why_not))
        if mode == 'enabled':
            ctx['errors'].append(_error('profiling_not_supported', 'dcgm_profiling',
                                        'DCGM profiling was enabled, but no GPU of this host supports it (%s). '
                                        'Set dcgm_exporter_profiling: auto or disabled' % '; '.join(why_not)))
        profiling = {'value': False, 'supported_gpus': [], 'reason': reason}
    else:
        reason = '%s: %d of %d GPU(s) support them' % (rule, len(supported), len(gpus))
        if why_not:
            reason += ' (not: %s)' % '; '.join(why_not)
        profiling = {'value': True, 'supported_gpus': supported, 'reason': reason}
    return {'exporter': exporter, 'profiling': profiling}


def _decide_roles(ctx, driver, dcgm):
    has_gpus = ctx['gpu_count'] > 0
    in_container = ctx['options']['in_container']
    driver_reason = driver['reason']
    group = 'decided by inventory group membership, not by hardware'
    if has_gpus and in_container and not ctx['driver_facts'].get('loaded'):
        validate = (False, 'GPUs present, but in a container without a loaded driver there is nothing to '
                           'measure')
    elif has_gpus:
        validate = (True, 'GPUs present: measure them against their published peak')
    else:
        validate = (False, 'no NVIDIA GPU to validate')
    gpu_stack_reason = ('driver installed: %s' % driver_reason) if driver['required'] else (
        'no driver: %s' % driver_reason)
    decisions = {
        'os_tuning': (True, 'every host is tuned; GPU-specific settings follow this plan'),
        'nvidia_driver': (driver['required'], driver_reason),
        'cuda_toolkit': (driver['required'], gpu_stack_reason),
        'nvidia_container_toolkit': (driver['required'], gpu_stack_reason),
        'python_stack': (True, 'every host gets the Python stacks (CPU wheels where there is no GPU)'),
        'node_exporter': (True, 'every host exports node metrics'),
        'dcgm_exporter': (dcgm['exporter']['value'], dcgm['exporter']['reason']),
        'prometheus': (True, group),
        'volcano': (True, group),
        'gpu_validate': validate,
    }
    return dict((name, {'run': decisions[name][0], 'reason': decisions[name][1]}) for name in ROLES)


def _collect_warnings(ctx):
    facts, warnings = ctx['facts'], ctx['warnings']
    for gpu in ctx['gpus']:
        pcie = gpu.get('pcie') or {}
        if not isinstance(pcie, dict):
            continue
        cur_gen, max_gen = _int_or_none(pcie.get('current_gen')), _int_or_none(pcie.get('max_gen'))
        cur_w, max_w = _int_or_none(pcie.get('current_width')), _int_or_none(pcie.get('max_width'))
        degraded = pcie.get('degraded')
        if not isinstance(degraded, bool):
            degraded = bool((cur_w is not None and max_w is not None and cur_w < max_w)
                            or (cur_gen is not None and max_gen is not None and cur_gen < max_gen))
        if degraded:
            message = 'GPU %s PCIe link runs at Gen%s x%s, capable of Gen%s x%s' % (
                _gpu_label(gpu), cur_gen if cur_gen is not None else '?', cur_w if cur_w is not None else '?',
                max_gen if max_gen is not None else '?', max_w if max_w is not None else '?')
            if cur_w is not None and max_w is not None and cur_w < max_w:
                message += ': a narrower link is a seating, riser or slot fault'
            else:
                message += ': a lower speed can be idle power saving, check it under load'
            warnings.append(_entry('pcie_degraded', message, pci_bus_id=gpu.get('pci_bus_id')))
        if gpu['architecture'] == UNKNOWN_ARCH:
            warnings.append(_entry('unknown_architecture',
                                   'GPU %s (device %s): architecture unknown, so the kernel-module flavour and the '
                                   'driver branch cannot be checked for it' % (
                                       _gpu_label(gpu), gpu.get('pci_device_id') or '?'),
                                   pci_bus_id=gpu.get('pci_bus_id')))
    for item in facts.get('errors') or []:
        if isinstance(item, dict):
            bus = item.get('pci_bus_id')
            text = item.get('message') or item.get('error') or item.get('msg') or str(item)
            where = item.get('source') or item.get('depth')
            index = item.get('nvml_index')
            prefix = 'GPU %s: ' % bus if bus else ('NVML GPU index %s: ' % index if index is not None else '')
            message = '%sprobe error%s: %s' % (prefix, ' (%s)' % where if where else '', text)
            warnings.append(_entry('probe_error', message, pci_bus_id=bus))
        else:
            warnings.append(_entry('probe_error', 'probe error: %s' % item))
    driver = ctx['driver_facts']
    if driver.get('loaded') is True and facts.get('source') == 'pci':
        tried = facts.get('depths_tried')
        why = []
        for item in tried or ():
            if isinstance(item, dict):
                if not item.get('answered') and item.get('reason'):
                    why.append('%s: %s' % (item.get('depth'), item.get('reason')))
            else:
                why.append(str(item))
        tried_note = ' (%s)' % '; '.join(why) if why else ''
        warnings.append(_entry('probe_shallow',
                               'the NVIDIA driver is loaded but only PCI sysfs answered%s: NVML details '
                               '(memory, ECC, MIG, topology) are missing; install nvidia-ml-py or nvidia-smi '
                               'on the host (gpuops_nvml_install: true)' % tried_note))
    listed = len(ctx['gpus'])
    if facts.get('gpus') is not None and listed != ctx['gpu_count']:
        warnings.append(_entry('gpu_count_mismatch', 'gpu_count is %d but %d GPU(s) are listed'
                               % (ctx['gpu_count'], listed)))


def build_plan(facts, options=None):
    """Turn ``ansible_facts.gpuops_gpu`` (DESIGN.md section 3) into the hardware plan.

    ``options`` is validated with validate_plan_options() (ValueError on bad input). Conflicts
    between the options and the hardware do not raise: they are listed in ``plan['errors']``
    (each naming the variable to change) and ``plan['ok']`` is false.
    """
    opts = validate_plan_options(options)
    if facts is None:
        raise ValueError('gpuops_gpu facts are missing: run gpuops.dlserver.gpu_facts on the host first')
    if not isinstance(facts, dict):
        raise ValueError('gpuops_gpu facts must be a dictionary, got %s' % type(facts).__name__)
    warnings, errors = [], []
    gpus = _normalise_gpus(facts, warnings)
    driver_facts = facts.get('driver') if isinstance(facts.get('driver'), dict) else {}
    archs = set(g['architecture'] for g in gpus)
    known = set(a for a in archs if a in ARCHITECTURES)
    ctx = {
        'facts': facts, 'options': opts, 'gpus': gpus, 'warnings': warnings, 'errors': errors,
        'gpu_count': _count(facts, 'gpu_count', len(gpus)),
        'nvswitch_count': _count(facts, 'nvswitch_count', len(facts.get('nvswitches') or [])),
        'archs': archs, 'known_archs': known,
        'has_unknown': UNKNOWN_ARCH in archs,
        'unknown_count': sum(1 for g in gpus if g['architecture'] == UNKNOWN_ARCH),
        'driver_facts': driver_facts,
    }
    ctx['fabric'] = fabric_evidence(facts, gpus)
    _collect_warnings(ctx)
    driver = _decide_driver(ctx)
    fabric_manager, nvlsm = _decide_fabric(ctx, driver)
    dcgm = _decide_dcgm(ctx)
    plan = {
        'plan_version': PLAN_VERSION,
        'host': {
            'gpu_count': ctx['gpu_count'],
            'nvswitch_count': ctx['nvswitch_count'],
            'nvswitch_mgmt_nic_count': len(ctx['fabric']['mgmt_nics']),
            'architectures': sorted(archs, key=lambda a: ARCHITECTURES.get(a, {'order': 999})['order']),
            'source': facts.get('source'),
            'in_container': opts['in_container'],
        },
        'driver': driver,
        'fabric_manager': fabric_manager,
        'nvlink_subnet_manager': nvlsm,
        'imex': _decide_imex(ctx, driver),
        'persistence': _decide_persistence(ctx, driver),
        'mig': _decide_mig(ctx, driver),
        'dcgm': dcgm,
        'exporters': {
            'node_exporter': {'run': True, 'reason': 'every host exports node metrics'},
            'dcgm_exporter': {'run': dcgm['exporter']['value'], 'reason': dcgm['exporter']['reason']},
        },
        'sysctl': ({'live': False, 'reason': 'in a container the kernel is the host\'s: sysctl settings are '
                                             'written to /etc/sysctl.d but not applied live'}
                   if opts['in_container'] else
                   {'live': True, 'reason': 'sysctl settings are written and applied live'}),
        'roles': _decide_roles(ctx, driver, dcgm),
        'options': opts,
        'warnings': warnings,
        'errors': errors,
        'ok': not errors,
    }
    return plan


def format_plan_errors(plan):
    """One message for every error of a plan; each message names the variable to change."""
    return '; '.join('[%s] %s' % (e['option'], e['message']) for e in plan.get('errors') or [])
