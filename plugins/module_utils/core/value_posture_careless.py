# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The careless values of value_posture.py's kinds: what the careless-value suite
(tests/unit/roles/test_bad_input.py) gives every variable of each kind, the issue's class of each
kind, the variables that need values of their own, and those refused only through another
variable. Data only; value_posture.py re-exports it and its careless_values() reads it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

_DIGEST = '@sha256:' + '0' * 64
# kind -> [(value, 'refused'|'accepted', reason)]: what the careless-value suite gives every
# variable of that kind (with the role's defaults for the rest; groups: all, ungrouped, gpu_nodes).
CARELESS = {
    'unique': [
        (['a1', 'a1'], 'refused', 'the same item twice configures it twice'),
        ([], 'accepted', 'an empty list configures nothing, as documented'),
    ],
    'unique_by': [
        ([{'name': 'a'}, {'name': 'a'}], 'refused', 'two entries for one name: one hides the other'),
    ],
    'inventory_group': [
        ('gpu_nodez', 'refused', 'a group the inventory does not have matches no host'),
        ('gpu_nodes', 'accepted', 'a group of the inventory'),
    ],
    'scrape': [],  # built per variable below (a credential, a TLS setting, the scheme)
    'scrape_configs': [
        ([{'job_name': 'x', 'static_configs': [{'targets': ['h:1']}]},
          {'job_name': 'x', 'static_configs': [{'targets': ['h:2']}]}], 'refused', 'one job_name twice'),
        ([{'job_name': 'x', 'basic_auth': {'username': 'u', 'password': 'p'}}], 'refused',
         'basic auth over the default scheme http'),
        ([{'job_name': 'x', 'scheme': 'https', 'basic_auth': {'username': 'u', 'password': 'p'}}], 'accepted',
         'basic auth over https'),
    ],
    'served_credentials': [
        ({'prometheus': '$2y$10$abcdefghijklmnopqrstuv'}, 'refused', 'passwords taken in clear without TLS'),
    ],
    'service_user': [
        ('root', 'refused', 'uid 0'), ('0', 'refused', 'uid 0 by number'), ('nobody', 'refused', 'shared account'),
        ('node-exp', 'accepted', 'an own unprivileged account'),
    ],
    'service_group': [
        ('root', 'refused', 'gid 0'), ('docker', 'refused', 'the Docker socket is root'),
        ('shadow', 'refused', 'reads password hashes'), ('sudo', 'refused', 'sudo to root'),
        ('disk', 'refused', 'raw block devices'), ('node-exp', 'accepted', 'an own unprivileged group'),
    ],
    'image': [
        ('nvcr.io/nvidia/cuda', 'refused', 'no tag means latest'),
        ('nvcr.io/nvidia/cuda:latest', 'refused', 'latest moves'),
        ('mirror.example:5000/nvidia/cuda:stable', 'refused', 'stable moves'),
        ('nvcr.io/nvidia/cuda:12', 'refused', 'a major version moves'),
        ('nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04', 'accepted', 'a full version'),
        ('nvcr.io/nvidia/cuda' + _DIGEST, 'accepted', 'a digest'),
    ],
    'image_tag': [
        ('', 'refused', 'no tag means latest'), ('latest', 'refused', 'latest moves'),
        ('main', 'refused', 'a branch moves'), ('4.4.0-4.5.0-ubuntu22.04', 'accepted', 'a full version'),
    ],
    'package': [
        ('Bad Name', 'refused', 'not a package name'),
        ('datacenter-gpu-manager-exporter', 'accepted', 'a package name'),
    ],
    'packages': [
        ([''], 'refused', 'an empty package name'), (['nvidia-smi', 'nvidia-smi'], 'refused', 'a package twice'),
        (['nvidia-smi'], 'accepted', 'a package name'),
    ],
    'pip_environments': [
        ([{'name': 'a', 'pip': ['torch']}, {'name': 'a', 'pip': ['numpy']}], 'refused', 'one name twice'),
        ([{'name': 'a', 'pinned': True, 'pip': ['torch', 'numpy>=1']}], 'refused',
         'declared pinned, entries without ==X'),
        ([{'name': 'a', 'pinned': True, 'pip': ['torch==2.13.0', 'numpy===2.1.0']}], 'accepted', 'every entry =='),
        ([{'name': 'a', 'pip': ['torch']}], 'accepted',
         'not declared pinned: ranges and names are the user\'s choice'),
    ],
    'opt_in': [],
}
# kind -> the class (the careless-value suite's summary per class)
CLASS_OF_KIND = dict(
    [(k, 'lists by their meaning') for k in ('unique', 'unique_by', 'inventory_group')]
    + [(k, 'security posture') for k in ('scrape', 'scrape_configs', 'served_credentials', 'service_user',
                                         'service_group', 'image', 'image_tag', 'package', 'packages',
                                         'pip_environments', 'opt_in')])
# per variable where its kind's values do not fit (kind 'scrape': the others' defaults decide)
CARELESS_BY_VARIABLE = {
    'os_tuning_limits': [([{'domain': '*', 'type': '-', 'item': 'nofile', 'value': 1},
                           {'domain': '*', 'type': '-', 'item': 'nofile', 'value': 2}], 'refused',
                          'one limit twice: the later line wins')],
    'os_tuning_limits_extra': [([{'domain': '*', 'type': '-', 'item': 'memlock', 'value': 1}], 'refused',
                                'repeats a limit of os_tuning_limits (its default)')],
    'gpu_validate_checks': [(['health', 'health'], 'refused', 'one check twice')],
    'nvidia_container_toolkit_engines': [(['crio', 'crio'], 'refused', 'one engine configured twice')],
    'prometheus_node_exporter_basic_auth_username': [('prometheus', 'refused', 'a credential over the default http')],
    'prometheus_node_exporter_basic_auth_password': [('secret', 'refused', 'a password over the default http')],
    'prometheus_node_exporter_tls_ca_file': [('/etc/ssl/ca.pem', 'refused', 'a CA on a plain-HTTP scrape')],
    'prometheus_node_exporter_tls_insecure_skip_verify': [(True, 'refused', 'a TLS setting on plain HTTP')],
    'prometheus_node_exporter_scheme': [('http', 'accepted', 'plain HTTP without credentials sends nothing secret')],
    'gpu_validate_peer_group': [('', 'accepted', 'no cross-node check'),
                                ('gpu_nodez', 'refused', 'a group the inventory does not have')],
    'dcgm_exporter_exporter_package': [('', 'accepted', 'the binary is put there by other means (documented)'),
                                       ('Bad Name', 'refused', 'not a package name')],
    'os_tuning_kernel_cmdline': [(['iommu=pt', 'iommu=off'], 'refused', 'one parameter given differently'),
                                 (['console=tty0', 'console=ttyS0'], 'accepted', 'the kernel takes console twice')],
    'node_exporter_extra_args': [(['--web.max-requests=40', '--web.max-requests=10'], 'refused', 'a flag twice')],
    'prometheus_rules_files': [(['/a/x.rules.yml', '/b/x.rules.yml'], 'refused', 'two files land on one path')],
    'dcgm_exporter_counters': [(['DCGM_FI_DEV_GPU_TEMP', {'name': 'DCGM_FI_DEV_GPU_TEMP', 'help': 'x'}], 'refused',
                                'one field twice, differently')],
}


# variables whose refusal needs another variable's value (tried through that variable's values)
REFUSED_THROUGH_OTHERS = {
    'prometheus_node_exporter_scheme': 'http is refused only with credentials or TLS client settings, whose own '
                                       'careless values try it',
}
