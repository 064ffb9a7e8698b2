# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The text of each file the os_tuning role writes, byte for byte what the role's former
templates rendered (tests/unit/plugins/module_utils/data/os_tuning_files: golden files), so that
the converged fast path of ``os_tuning.decide()`` can compare it with the host's. Pure
functions, standard library only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

CPUFREQ_SCRIPT = '/usr/local/libexec/gpuops/cpufreq-governor'

# ---------------------------------------------------------------------------------------
# The text of the files the role writes (the converged fast path compares it with the host's)
# ---------------------------------------------------------------------------------------
# What the role's former templates wrote first ({{ ansible_managed | comment }} with Ansible's
# default ansible_managed): kept, so that a host converged by an earlier release stays current.
MANAGED = '#\n# Ansible managed\n#\n'
MANAGED_C = '//\n// Ansible managed\n//\n'
FILE_KEYS = ('sysctl', 'limits', 'systemd_limits', 'thp_unit', 'cpufreq_script', 'cpufreq_unit', 'grub_dropin',
             'unattended')


def _dictsort(mapping):
    """Jinja's dictsort: by key, case-insensitively (its default)."""
    return sorted((mapping or {}).items(), key=lambda kv: kv[0].lower() if isinstance(kv[0], str) else kv[0])


def _sysctl_text(inputs, decisions):
    return (MANAGED + '# gpuops.dlserver.os_tuning: os_tuning_sysctl_defaults < os_tuning_sysctl_group\n'
            '# < os_tuning_sysctl_overwrite, merged. Change those variables, not this file.\n'
            + ''.join('%s = %s\n' % (k, v) for k, v in _dictsort(decisions['sysctl']['settings'])))


def _limits_text(inputs, decisions):
    return (MANAGED + '# gpuops.dlserver.os_tuning: os_tuning_limits + os_tuning_limits_extra (PAM sessions).\n'
            '# Services started by systemd get os_tuning_systemd_limits instead.\n'
            '# <domain>       <type> <item>     <value>\n'
            + ''.join('%-16s %-6s %-10s %s\n' % (e['domain'], e['type'], e['item'], e['value'])
                      for e in decisions['limits']['entries']))


def _systemd_limits_text(inputs, decisions):
    return (MANAGED + '# gpuops.dlserver.os_tuning: os_tuning_systemd_limits, the defaults for every service the\n'
            '# systemd manager starts (services do not read /etc/security/limits.d).\n[Manager]\n'
            + ''.join('%s=%s\n' % (k, v) for k, v in _dictsort(inputs.get('systemd_limits'))))


_CONTAINER_CONDITION = ('# Inside a container the kernel belongs to the host (os_tuning_apply_live: auto).\n'
                        'ConditionVirtualization=!container\n')


def _thp_text(inputs, decisions):
    condition = _CONTAINER_CONDITION if inputs['apply_live'] == 'auto' else ''
    start = ''.join("ExecStart=/bin/sh -c 'echo %s > /sys/kernel/mm/transparent_hugepage/%s'\n" % (inputs[key], name)
                    for key, name in (('thp_enabled', 'enabled'), ('thp_defrag', 'defrag')) if inputs.get(key))
    return (MANAGED + '# gpuops.dlserver.os_tuning: transparent hugepage policy, applied at every boot.\n[Unit]\n'
            'Description=Transparent hugepage policy for GPU workloads (gpuops.dlserver.os_tuning)\n'
            'DefaultDependencies=no\nAfter=sysinit.target local-fs.target\nBefore=basic.target\n'
            'ConditionPathIsDirectory=/sys/kernel/mm/transparent_hugepage\n' + condition
            + '\n[Service]\nType=oneshot\nRemainAfterExit=yes\n' + start + '\n[Install]\nWantedBy=basic.target\n')


def _cpufreq_unit_text(inputs, decisions):
    governor = inputs.get('cpu_governor')
    condition = _CONTAINER_CONDITION if inputs['apply_live'] == 'auto' else ''
    return (MANAGED + '# gpuops.dlserver.os_tuning: CPU frequency governor, applied at every boot. The script\n'
            '# succeeds without changing anything where there is no cpufreq driver (VMs, containers).\n[Unit]\n'
            'Description=CPU frequency governor %s (gpuops.dlserver.os_tuning)\n'
            'After=sysinit.target ondemand.service\n' % governor + condition
            + '\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s %s\n\n[Install]\nWantedBy=multi-user.target\n'
            % (CPUFREQ_SCRIPT, governor))


CPUFREQ_SCRIPT_TEXT = r'''#!/bin/sh
# Managed by Ansible (gpuops.dlserver.os_tuning); run by gpuops-cpufreq.service.
# Usage: cpufreq-governor GOVERNOR
# Writes GOVERNOR to scaling_governor of every CPU that has cpufreq. Succeeds, and says so,
# where there is no cpufreq driver (VMs, containers); fails when a CPU does not offer it.
set -eu
governor="${1:?usage: cpufreq-governor GOVERNOR}"
found=0
failed=0
for file in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
    [ -e "$file" ] || continue
    found=$((found + 1))
    dir=${file%/scaling_governor}
    available=""
    [ -r "$dir/scaling_available_governors" ] && available=$(cat "$dir/scaling_available_governors")
    case " $available " in
        "  " | *" $governor "*) ;;
        *)
            echo "cpufreq-governor: $governor is not offered by $dir (available: $available)" >&2
            failed=1
            continue
            ;;
    esac
    if [ "$(cat "$file")" != "$governor" ]; then
        echo "$governor" > "$file" || failed=1
    fi
done
if [ "$found" -eq 0 ]; then
    echo "cpufreq-governor: no cpufreq driver, nothing to set"
    exit 0
fi
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "cpufreq-governor: $governor set on $found CPUs"
'''


def _grub_text(inputs, decisions):
    return (MANAGED + "# gpuops.dlserver.os_tuning: os_tuning_kernel_cmdline, appended to the distribution's and\n"
            "# earlier drop-ins' defaults. update-grub reads this file; a reboot activates it.\n"
            'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT %s"\n'
            % ' '.join(str(p) for p in inputs.get('kernel_cmdline') or []))


def _unattended_text(inputs, decisions):
    return (MANAGED_C + '// gpuops.dlserver.os_tuning: keep kernel (where a driver is installed) and NVIDIA packages '
            'away\n// from unattended-upgrades. Entries are Python regular expressions matched from the start of\n'
            '// the package name, each translated from the os_tuning_unattended_blacklist glob named after it.\n'
            'Unattended-Upgrade::Package-Blacklist {\n'
            + ''.join('    "%s";  // %s\n' % (e['regex'], e['glob']) for e in decisions['unattended']['patterns'])
            + '};\n')


RENDERERS = {
    'sysctl': _sysctl_text, 'limits': _limits_text, 'systemd_limits': _systemd_limits_text, 'thp_unit': _thp_text,
    'cpufreq_script': lambda inputs, decisions: CPUFREQ_SCRIPT_TEXT, 'cpufreq_unit': _cpufreq_unit_text,
    'grub_dropin': _grub_text, 'unattended': _unattended_text,
}


def render(key, inputs, decisions):
    """The text of the role's file ``key`` (FILE_KEYS) for these inputs and decisions."""
    return RENDERERS[key](inputs, decisions)
