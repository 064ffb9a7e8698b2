# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver part of the plan: whether a host needs the driver, the branch range every GPU
accepts, the branch (``plan/driver_branch.py``) and the kernel-module flavour.

Pure functions, standard library only, Python 3.8+. Sources: docs/hardware-gating.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.capabilities import (
    ARCHITECTURES,
    UNKNOWN_ARCH,
    arch_list,
    entry,
    int_or_none,
    open_capable,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_branches
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import adopt, driver_branch
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import branch_of_version, error

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


def decide_driver(ctx):
    opts = ctx['options']
    gpu_count = ctx['gpu_count']
    if gpu_count > 0:
        required = True
        reason = '%d NVIDIA GPU(s) found (%s)' % (gpu_count, arch_list(ctx['archs']) or 'architecture unknown')
        if opts['driver_force']:
            reason += '; nvidia_driver_force is set as well'
    elif opts['driver_force']:
        required = True
        reason = 'no NVIDIA GPU found, but nvidia_driver_force is true: install anyway'
    else:
        required = False
        reason = 'no NVIDIA GPU found on PCI; set nvidia_driver_force: true to install the driver anyway'

    loaded = ctx['driver_facts'].get('loaded') is True
    loaded_version = ctx['driver_facts'].get('version')
    loaded_branch = branch_of_version(loaded_version) if loaded else None
    # Installed counts as well as loaded (a driver installed and pending its reboot keeps its
    # branch): the reader may add the installed kernel-module packages as driver.installed_packages.
    try:
        installed = adopt.installed_driver(ctx['driver_facts'].get('installed_packages'),
                                           loaded_version if loaded else None)
    except adopt.AdoptError as exc:
        raise ValueError('gpuops_gpu.driver.installed_packages: %s' % exc)
    branch_min, branch_max, branch_reason, branch_min_version = branch_range(ctx)

    if not required:
        modules, modules_reason = decide_modules(ctx, required, opts['driver_branch'])
        branch = {'value': opts['driver_branch'], 'from': driver_branch.FROM_NONE, 'min': None, 'max': None,
                  'min_version': None, 'reason': 'no driver is installed on this host, so the branch is not checked'}
    else:
        available = source_branches(opts)
        choice = driver_branch.choose(
            requested=opts['driver_branch'], version=opts['driver_version'],
            version_branch=branch_of_version(opts['driver_version']), upgrade=opts['driver_upgrade'],
            installed=installed['branch'], installed_version=installed['version'], low=branch_min, high=branch_max,
            available=available['value'], available_reason=available['reason'])
        modules, modules_reason = decide_modules(ctx, required, choice['value'])
        branch = check_branch(ctx, choice, branch_min, branch_max, branch_reason, modules, branch_min_version)

    if not required:
        load = (False, 'no driver is installed on this host')
    elif opts['in_container']:
        load = (False, 'running in a container: the kernel belongs to the host, so no kernel module is '
                       'built or loaded here (packages only)')
    else:
        load = (True, 'bare metal or VM: the kernel modules are built for and loaded into this kernel')

    left_alone = (ctx.get('adopt_driver') or {}).get('action') == 'leave'
    if required and not left_alone and loaded_branch is not None and branch['value'] is not None \
            and loaded_branch != branch['value']:
        ctx['warnings'].append(entry(
            'driver_branch_change',
            'driver %s (branch %s) is loaded, the plan installs branch %s: the driver changes and the host '
            'needs a reboot' % (loaded_version, loaded_branch, branch['value'])))
    return {
        'required': required,
        'reason': reason,
        'kernel_modules': {'value': modules, 'reason': modules_reason},
        'branch': branch,
        'load_modules': {'value': load[0], 'reason': load[1]},
        'loaded': {'value': loaded, 'version': loaded_version if loaded else None, 'branch': loaded_branch},
        'installed': installed,
    }


def source_branches(opts):
    """``{value, reason}``: the branches the driver source carries on this host - the option
    ``source_branches`` where given (the gpu_plan filter), else the collection's table for the host's
    distribution, major version and ``nvidia_driver_source`` (packages/driver_branches.py)."""
    if opts['source_branches'] is not None:
        return {'value': opts['source_branches'], 'reason': 'the branches given in the option source_branches'}
    found = driver_branches.source_branches(opts['distribution'], opts['distribution_major'], opts['driver_source'])
    if found['value'] is None:
        return found
    return {'value': found['value'], 'reason': 'nvidia_driver_source %s on %s %s: %s (packages/driver_branches.py)'
            % (opts['driver_source'], opts['distribution'], opts['distribution_major'], found['reason'])}


def gpu_model_label(gpu):
    name = gpu.get('model_name') or 'GPU'
    if not name.startswith('NVIDIA '):
        name = 'NVIDIA ' + name
    return '%s (%s, device %s)' % (name, gpu.get('pci_bus_id') or '?', gpu.get('pci_device_id') or '?')


def branch_range(ctx):
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
        floor = int_or_none(gpu.get('min_branch'))
        label = None
        if floor is not None:
            label = '%s' % gpu_model_label(gpu)
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


def check_branch(ctx, choice, low, high, range_reason, modules, min_version=None):
    """The plan's ``driver.branch``: the chosen branch checked against the GPUs and the flavour."""
    errors = ctx['errors']
    value = choice['value']
    if low is not None and high is not None and low > high:
        errors.append(error('no_common_branch', 'driver_branch',
                            'no driver branch supports every GPU of this host (%s): %s. Split the GPUs '
                            'across hosts; no value of nvidia_driver_branch can work' % (
                                arch_list(ctx['known_archs']), range_reason)))
    elif choice['from'] == driver_branch.FROM_NONE:
        errors.append(error('no_source_branch', 'driver_branch',
                            '%s. Set nvidia_driver_branch to a branch the source carries, or change '
                            'nvidia_driver_source' % choice['reason']))
    reason = choice['reason']
    if value is not None and low is not None and value < low:
        errors.append(error('branch_too_old', 'driver_branch',
                            'driver branch %d is too old for this host: %s. Set nvidia_driver_branch '
                            'to %d or newer' % (value, range_reason, low)))
    if value is not None and high is not None and value > high:
        errors.append(error('branch_too_new', 'driver_branch',
                            'driver branch %d no longer supports this host: %s. Set '
                            'nvidia_driver_branch to %d or older' % (value, range_reason, high)))
    if range_reason:
        reason += ' (%s)' % range_reason
    if ctx['has_unknown']:
        reason += '; GPUs of unknown architecture cannot be checked against the branch'
    if modules == 'open' and value is not None and value < OPEN_MODULES_FIRST_BRANCH:
        errors.append(error('open_modules_branch', 'driver_branch',
                            'open kernel modules exist from branch %d on; branch %d has none. Set '
                            'nvidia_driver_branch to %d or newer, or nvidia_driver_kernel_modules: '
                            'proprietary where the GPUs allow it' % (
                                OPEN_MODULES_FIRST_BRANCH, value, OPEN_MODULES_FIRST_BRANCH)))
    return {'value': value, 'from': choice['from'], 'min': low, 'max': high,
            'min_version': min_version if low is not None else None, 'reason': reason}


def decide_modules(ctx, required, branch):
    choice = ctx['options']['kernel_modules']
    errors = ctx['errors']
    known = ctx['known_archs']
    gpus = ctx['gpus']
    # what needs the open modules: Blackwell (architecture), GH200 (its own row), new silicon
    need_open = [a for a in sorted(known, key=lambda x: ARCHITECTURES[x]['order'])
                 if not ARCHITECTURES[a]['proprietary']]
    need_open += sorted(set(gpu_model_label(g) for g in gpus
                            if g.get('proprietary_supported') is False and ARCHITECTURES.get(
                                g['architecture'], {}).get('proprietary', True)))
    new_silicon = [g for g in gpus if g.get('new_silicon')]
    old_unknown = [g for g in gpus if g['architecture'] == UNKNOWN_ARCH and not g.get('new_silicon')]
    need_prop = sorted(a for a in known if not ARCHITECTURES[a]['open'])
    # GeForce/workstation GPUs on a branch whose open modules were alpha for them
    early = branch is not None and branch < OPEN_MODULES_ALL_GPUS_BRANCH
    alpha = [g for g in gpus if early and open_capable(g) and g.get('segment') != 'datacenter']
    alpha_note = ('open kernel modules before branch %d were alpha quality on GeForce and workstation GPUs '
                  '(%s) and load there only with the module parameter %s'
                  % (OPEN_MODULES_ALL_GPUS_BRANCH, ', '.join(sorted(set(gpu_model_label(g) for g in alpha))),
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
            errors.append(error('kernel_modules_conflict', 'kernel_modules',
                                '%s GPUs are driven by the open kernel modules only; set '
                                'nvidia_driver_kernel_modules to open or auto (it is proprietary)'
                                % ', '.join(need_open)))
            reason += ', which %s GPUs do not support' % ', '.join(need_open)
        if choice == 'proprietary' and new_silicon:
            ctx['warnings'].append(entry(
                'unknown_gpu_proprietary',
                'proprietary kernel modules forced on %d GPU(s) no table names but whose device id is Turing or '
                'newer: Blackwell and newer GPUs run the open modules only' % len(new_silicon)))
        if choice == 'open' and need_prop:
            errors.append(error('kernel_modules_conflict', 'kernel_modules',
                                'the open kernel modules need the GSP of Turing and newer GPUs; %s GPUs need '
                                'the proprietary ones: set nvidia_driver_kernel_modules to proprietary or auto '
                                '(it is open)' % arch_list(need_prop)))
            reason += ', which %s GPUs do not support' % arch_list(need_prop)
        if choice == 'open' and alpha:
            errors.append(error('open_modules_alpha', 'kernel_modules',
                                'nvidia_driver_kernel_modules is open with branch %d: %s. The collection does '
                                'not set that parameter; set nvidia_driver_branch to %d or newer, or '
                                'nvidia_driver_kernel_modules to proprietary or auto'
                                % (branch, alpha_note, OPEN_MODULES_ALL_GPUS_BRANCH)))
            reason += '; %s' % alpha_note
        return choice, reason + unknown_note

    if need_open and need_prop:
        errors.append(error('kernel_modules_conflict', 'kernel_modules',
                            'no kernel-module flavour drives every GPU of this host: %s need the open '
                            'modules, %s the proprietary ones. No value of nvidia_driver_kernel_modules can '
                            'work; split the GPUs across hosts' % (', '.join(need_open), arch_list(need_prop))))
        return None, 'no flavour fits: %s need open, %s need proprietary' % (
            ', '.join(need_open), arch_list(need_prop))
    if need_open:
        reason = '%s GPUs are supported by the open kernel modules only' % ', '.join(need_open)
        return 'open', reason + unknown_note
    if need_prop:
        return 'proprietary', ('%s GPUs predate Turing: they have no GSP, which the open kernel modules need; '
                               'NVIDIA keeps the proprietary modules for them (and for hosts mixing them with '
                               'newer GPUs)' % arch_list(need_prop))
    if old_unknown:
        return 'proprietary', (
            '%d GPU(s) of unknown architecture whose PCI device id is older than Turing\'s (below 0x%04x): '
            'not guessing open. The proprietary modules drive every architecture from Maxwell to Hopper; '
            'if these are Turing or newer, set nvidia_driver_kernel_modules: open'
            % (len(old_unknown), 0x1E00))
    if alpha:
        return 'proprietary', alpha_note + ': the proprietary modules are the production ones there'
    if new_silicon and not known:
        ctx['warnings'].append(entry(
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
                               % (arch_list(known), branch, OPEN_MODULES_FIRST_BRANCH))
    if new_silicon:
        ctx['warnings'].append(entry(
            'unknown_gpu_new_silicon',
            '%d GPU(s) no table names have a Turing-or-newer device id: treated as new silicon (open kernel '
            'modules, branch %d or newer)' % (len(new_silicon), UNKNOWN_GPU_MIN_BRANCH)))
    return 'open', ('%s GPUs are Turing or newer: NVIDIA recommends the open kernel modules for them '
                    '(the default since branch %d)' % (arch_list(known), OPEN_MODULES_DEFAULT_BRANCH))
