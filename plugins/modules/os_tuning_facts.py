#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: os_tuning_facts
short_description: Read what gpuops.dlserver.os_tuning decides on and return its decisions
version_added: 0.1.0
description:
  - The one read of the host the C(gpuops.dlserver.os_tuning) role makes, and all its decisions
    (C(plugins/module_utils/host/os_tuning.py)) - what is applied live, what the boot loader
    configuration lacks, what waits for a reboot and whether to reboot, the unattended-upgrade
    blacklist, the kernel holds, the kernel updates they keep back, the files and units to
    write, and the status record.
  - Fails, before the role changes anything, when an input is wrong, naming each variable.
  - "Reads: C(/proc/cmdline), the generated GRUB configuration (Debian family) or
    C(grubby --info=DEFAULT) (EL), whether the boot loader tool, the cpufreq directory and the
    role's units exist, the live values of the role's sysctl keys (where applied live), the
    installed kernel packages (where they are held) and C(apt-get --simulate --ignore-hold
    dist-upgrade) (Debian family, where kernels are kept back)."
  - Changes nothing on the host.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  inputs:
    description:
      - The role's variables converted by its argument spec (C(__os_tuning), published by
        M(gpuops.dlserver.role_inputs)), keys without the C(os_tuning_) prefix.
    type: dict
    required: true
  platform:
    description:
      - The role's per-platform variables.
    type: dict
    required: true
    suboptions:
      cmdline_backend:
        description: How kernel parameters reach the boot loader.
        type: str
        choices: [grub_dropin, grubby]
        required: true
      grub_tool:
        description: C(update-grub) or C(grubby).
        type: path
        required: true
      grub_cfg:
        description: The generated GRUB configuration.
        type: path
        required: true
      grub_dropin:
        description: The role's GRUB drop-in (C(grub_dropin) backend).
        type: path
      unattended_backend:
        description: Which automatic-upgrade tool the blacklist is written for.
        type: str
        choices: [apt, dnf_automatic]
        required: true
      unattended_file:
        description: The blacklist file.
        type: path
        required: true
      hold_backend:
        description: How kernel packages are held.
        type: str
        choices: [dpkg, versionlock]
        required: true
      kernel_packages:
        description: Kernel metapackages held where installed.
        type: list
        elements: str
        default: []
  in_container:
    description: The host is a container guest (C(gpuops_in_container)).
    type: bool
    default: false
  virtualization_type:
    description: C(ansible_facts.virtualization_type), for the reasons.
    type: str
    default: ""
  virtualization_role:
    description: C(ansible_facts.virtualization_role), for the status record.
    type: str
    default: ""
  driver_required:
    description:
      - The hardware plan installs the NVIDIA driver on this host (C(gpuops_plan.driver.required)).
        Kernel globs of the blacklist and kernel holds apply only then.
    type: bool
    default: false
  kernel:
    description: The running kernel release (C(ansible_facts.kernel)).
    type: str
    default: ""
  reboot_marker:
    description:
      - The collection's reboot-required file; whether it holds an C(os_tuning:) line decides if
        the role's reboot record has anything to write or clear (RV(reboot_record)).
    type: path
    default: /run/gpuops/reboot-required
  root:
    description: Directory the host's files are read under (tests, chroots).
    type: path
    default: /
notes:
  - On EL the kernel updates kept back are not checked (reported as not checked).
seealso:
  - name: The os_tuning role
    description: docs/roles/os_tuning.md in the collection.
    link: https://github.com/gpuops/dlserver/blob/main/docs/roles/os_tuning.md
"""

EXAMPLES = r"""
- name: Decide what os_tuning applies (fails on bad input, before any change)
  gpuops.dlserver.os_tuning_facts:
    inputs: "{{ __os_tuning }}"
    platform:
      cmdline_backend: grub_dropin
      grub_tool: /usr/sbin/update-grub
      grub_cfg: /boot/grub/grub.cfg
      grub_dropin: /etc/default/grub.d/90-gpuops.cfg
      unattended_backend: apt
      unattended_file: /etc/apt/apt.conf.d/51gpuops-unattended-upgrades
      hold_backend: dpkg
      kernel_packages: [linux-image-amd64]
    in_container: "{{ gpuops_in_container }}"
    driver_required: "{{ gpuops_plan.driver.required }}"
    kernel: "{{ ansible_facts['kernel'] }}"
  register: __os_tuning_facts
"""

RETURN = r"""
live:
  description: Whether settings act on the running system now (C(live)), whether kernel and boot loader are the host's, and why not.
  returned: success
  type: dict
  sample: {live: false, host_owned: false, reason: "container (docker): the running kernel belongs to the host, persisted only"}
sysctl:
  description: The merged settings, the role's file, and the keys whose live value differs (C(drift)).
  returned: success
  type: dict
thp:
  description: Transparent hugepage policy, its unit, whether it is applied now and why.
  returned: success
  type: dict
cpufreq:
  description: CPU governor, its unit, whether a cpufreq driver exists, whether it is applied now and why.
  returned: success
  type: dict
limits:
  description: PAM limits entries and files, whether systemd is re-executed and why.
  returned: success
  type: dict
kernel_cmdline:
  description:
    - Wanted parameters, the ones the boot loader configuration lacks (C(boot_missing)), the ones
      not in C(/proc/cmdline) yet (C(pending)), whether the boot loader is managed and why not.
  returned: success
  type: dict
reboot:
  description: The reboot decision, C({needed, action, reason, timeout}) with action none, reboot, deferred or skipped.
  returned: success
  type: dict
  sample:
    needed: true
    action: deferred
    timeout: 1800
    reason: >-
      kernel command line parameters not active until reboot: iommu=pt; deferred: os_tuning_reboot
      is false, reboot when convenient and run the play again
reboot_record:
  description:
    - Whether the role's line in O(reboot_marker) must be written, changed or cleared (a reboot is
      needed, or the file holds an C(os_tuning:) line); false on a host with nothing to record.
  returned: success
  type: bool
unattended:
  description: The blacklist globs that apply (kernel globs only where a driver is installed), their regular expressions and the file.
  returned: success
  type: dict
hold:
  description: Installed kernel packages to hold (C(held)) and those not held yet (C(to_hold)), and why.
  returned: success
  type: dict
held_back:
  description: Kernel updates the blacklist or hold keeps back (C(updates)), the security ones (C(security)), whether checked and how.
  returned: success
  type: dict
files:
  description: Directories to create, files to template (key, dest, src, mode) and files to remove.
  returned: success
  type: dict
units:
  description: Units to stop and disable (C(stop)) and to enable, started where live (C(enable)).
  returned: success
  type: dict
status:
  description: The status record the role writes to C(os_tuning_status_file).
  returned: success
  type: dict
ansible_facts:
  description: The status record again, as the fact C(os_tuning_status).
  returned: success
  type: dict
  contains:
    os_tuning_status:
      description: Same as RV(status).
      type: dict
      returned: success
problems:
  description: On bad input, one line per problem, each naming the variable.
  returned: failure
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning

C_ENV = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}
REQUIRED_INPUTS = ('apply_live', 'sysctl_file', 'limits_file', 'systemd_limits_file', 'status_file',
                   'reboot_timeout')


class HostReader(object):
    """Reads the host state os_tuning decides on, under ``root``."""

    def __init__(self, module, root):
        self.module = module
        self.root = root

    def path(self, path):
        return os.path.join(self.root, path.lstrip('/'))

    def exists(self, path):
        return os.path.exists(self.path(path))

    def read(self, path):
        try:
            with open(self.path(path)) as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            self.module.fail_json(msg='os_tuning_facts: cannot read %s: %s' % (path, exc), rc=1, stderr=str(exc))

    def run(self, argv, what):
        rc, out, err = self.module.run_command(argv, environ_update=C_ENV)
        if rc != 0:
            self.module.fail_json(msg='os_tuning_facts: %s failed (%s)' % (what, ' '.join(argv)),
                                  rc=rc, stdout=out, stderr=err)
        return out

    def sysctl_live(self, keys):
        values = {}
        for key in keys:
            # sysctl names use '.' between components and '/' for a '.' inside one.
            path = '/proc/sys/' + key.translate(str.maketrans('./', '/.'))
            if self.exists(path):
                values[key] = self.read(path).strip()
        return values

    def packages(self, backend):
        if backend == 'dpkg':
            out = self.run(['dpkg-query', '-W', '-f', '${Package}\\t${Version}\\t${db:Status-Abbrev}\\n'],
                           'listing the installed packages')
            result = {}
            for line in out.splitlines():
                fields = line.split('\t')
                if len(fields) == 3 and fields[2][1:2] == 'i':
                    result[fields[0]] = {'version': fields[1], 'held': fields[2][:1] == 'h'}
            return result
        out = self.run(['rpm', '-qa', '--qf', '%{NAME}\\t%{VERSION}-%{RELEASE}\\n'], 'listing the installed packages')
        return dict((f[0], {'version': f[1], 'held': False})
                    for f in (line.split('\t') for line in out.splitlines()) if len(f) == 2)


def read_host(module, reader, inputs, platform, context):
    """Everything the decisions need, read once, no more than they need."""
    p = module.params
    now = os_tuning.live(inputs['apply_live'], p['in_container'], p['virtualization_type'])
    wanted_cmdline = bool(inputs.get('kernel_cmdline'))
    grub_tool = reader.exists(platform['grub_tool'])
    host = {
        'cmdline': reader.read('/proc/cmdline') if wanted_cmdline else '',
        'boot_text': None,
        'grub_tool': grub_tool,
        'cpufreq_driver': reader.exists(os_tuning.CPUFREQ_PROBE),
        'units': dict((unit, reader.exists(os.path.join(os_tuning.UNIT_DIR, unit)))
                      for unit in (os_tuning.THP_UNIT, os_tuning.CPUFREQ_UNIT)),
        'packages': {},
        'simulation': None,
        'sysctl_live': reader.sysctl_live(sorted(os_tuning.merge_sysctl(inputs))) if now['live'] else {},
    }
    if wanted_cmdline and now['host_owned'] and grub_tool:
        if platform['cmdline_backend'] == 'grubby':
            host['boot_text'] = reader.run([platform['grub_tool'], '--info=DEFAULT'], 'reading the default boot entry')
        elif reader.exists(platform['grub_cfg']):
            host['boot_text'] = reader.read(platform['grub_cfg'])
    if context['driver_required'] and inputs.get('hold_kernel'):
        host['packages'] = reader.packages(platform['hold_backend'])
    kernel_globs = os_tuning.unattended(inputs, platform, context['driver_required'])['kernel_globs']
    holds = os_tuning.kernel_hold(inputs, platform, context['driver_required'], context['kernel'], host['packages'])
    if platform['unattended_backend'] == 'apt' and (kernel_globs or holds['held']):
        out = reader.run(['apt-get', '--simulate', '--ignore-hold', '-o', 'Debug::NoLocking=true', 'dist-upgrade'],
                         'simulating the upgrades')
        host['simulation'] = os_tuning.parse_apt_simulation(out)
    return host


def main():
    module = AnsibleModule(
        argument_spec=dict(
            inputs=dict(type='dict', required=True),
            platform=dict(type='dict', required=True, options=dict(
                cmdline_backend=dict(type='str', required=True, choices=['grub_dropin', 'grubby']),
                grub_tool=dict(type='path', required=True),
                grub_cfg=dict(type='path', required=True),
                grub_dropin=dict(type='path'),
                unattended_backend=dict(type='str', required=True, choices=['apt', 'dnf_automatic']),
                unattended_file=dict(type='path', required=True),
                hold_backend=dict(type='str', required=True, choices=['dpkg', 'versionlock']),
                kernel_packages=dict(type='list', elements='str', default=[]),
            )),
            in_container=dict(type='bool', default=False),
            virtualization_type=dict(type='str', default=''),
            virtualization_role=dict(type='str', default=''),
            driver_required=dict(type='bool', default=False),
            kernel=dict(type='str', default=''),
            reboot_marker=dict(type='path', default='/run/gpuops/reboot-required'),
            root=dict(type='path', default='/'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    inputs, platform = params['inputs'], params['platform']
    missing = [name for name in REQUIRED_INPUTS if name not in inputs]
    if missing:
        module.fail_json(msg='os_tuning_facts: inputs lacks %s; pass the converted role inputs (__os_tuning)'
                             % ', '.join(missing))
    if platform['cmdline_backend'] == 'grub_dropin' and not platform.get('grub_dropin'):
        module.fail_json(msg='os_tuning_facts: platform.grub_dropin is required with the grub_dropin backend')
    problems = os_tuning.problems(inputs)
    if problems:
        module.fail_json(msg='gpuops.dlserver.os_tuning: bad input, nothing was changed: %s.' % '; '.join(problems),
                         problems=problems)
    context = {
        'in_container': params['in_container'], 'virtualization_type': params['virtualization_type'],
        'virtualization_role': params['virtualization_role'], 'driver_required': params['driver_required'],
        'kernel': params['kernel'], 'check_mode': module.check_mode,
    }
    reader = HostReader(module, params['root'])
    host = read_host(module, reader, inputs, platform, context)
    decisions = os_tuning.decide(inputs, platform, context, host)
    marker = reader.read(params['reboot_marker']) if reader.exists(params['reboot_marker']) else ''
    decisions['reboot_record'] = os_tuning.reboot_record(decisions['reboot'], marker)
    module.exit_json(changed=False, ansible_facts={'os_tuning_status': decisions['status']}, **decisions)


if __name__ == '__main__':
    main()
