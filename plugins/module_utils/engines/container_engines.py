# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Container engine configuration for the NVIDIA runtime: merged, never clobbered.

Pure functions (text in, text out, plus problems and reasons), tested from
tests/unit/plugins/module_utils/data/container_engines_cases.yml:

- Docker: ``runtimes.nvidia`` (and optionally ``default-runtime``, ``features.cdi``) merged
  into the user's daemon.json; every other key is kept as it was.
- containerd: a drop-in of the role's own (config version 2 or 3 paths of the CRI plugin)
  and the ``imports`` line of the user's main config.toml, edited textually so that the
  user's comments, order and settings stay; the result must parse and hold the same settings.
- CRI-O: a drop-in of the role's own under crio.conf.d.
- /etc/nvidia-container-runtime/config.toml: the package's settings with the user's merged in.

TOML is read by ``toml_lite.loads``: tomllib where the managed node's Python has it (3.11+),
else the collection's reader of the TOML these files use (Ubuntu 22.04's 3.10, EL 9's 3.9,
Python 3.8 and newer); the role's own files are rendered by ``dump_toml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import toml_lite

HEADER = '# Managed by Ansible (gpuops.dlserver.nvidia_container_toolkit): local changes are overwritten.\n'
# The CRI plugin's table per containerd config version, each row with its source and read date
# (docs/vendor-facts.md lists them).
_CRI_DOC = ('containerd/containerd docs/cri/config.md (CRI Plugin Config Guide), "Config versions": "The config '
            'version 3 was introduced in containerd v2.0. The config version 2 used in containerd 1.x is still '
            'supported"; its cgroup driver example: ')
CONTAINERD_CRI_ROWS = (
    {'version': 2, 'plugin': 'io.containerd.grpc.v1.cri', 'read': '2026-12-07',
     'source': _CRI_DOC + '"In containerd 1.x ... version = 2 [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.'
                          'runc.options]"'},
    {'version': 3, 'plugin': 'io.containerd.cri.v1.runtime', 'read': '2026-12-07',
     'source': _CRI_DOC + '"In containerd 2.x ... version = 3 [plugins.\'io.containerd.cri.v1.runtime\'.containerd.'
                          'runtimes.runc.options]"'},
)
CONTAINERD_CRI = dict((row['version'], row['plugin']) for row in CONTAINERD_CRI_ROWS)
CDI_SPEC_DIRS = ['/etc/cdi', '/var/run/cdi']


class ConfigError(Exception):
    """A user file the role cannot merge into (names the file and the problem)."""


# --------------------------------------------------------------------------- TOML

_BARE_KEY = re.compile(r'[A-Za-z0-9_-]+\Z')


def _key(key):
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _value(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_value(v) for v in value) + ']'
    if isinstance(value, dict):
        return '{' + ', '.join('%s = %s' % (_key(k), _value(v)) for k, v in value.items()) + '}'
    raise ConfigError('cannot write %r as TOML' % (value,))


def dump_toml(data, prefix=()):
    """TOML text of a dict: scalars and arrays first, then one [table] per nested dict."""
    lines = []
    tables = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append('%s = %s' % (_key(key), _value(value)))
    out = ''
    if prefix and (lines or not tables):
        out += '\n[%s]\n' % '.'.join(_key(k) for k in prefix)
    out += ''.join(line + '\n' for line in lines)
    for key, value in tables:
        out += dump_toml(value, prefix + (key,))
    return out


def parse_toml(text, path):
    try:
        return toml_lite.loads(text)
    except toml_lite.TomlError as exc:
        raise ConfigError('%s is not valid TOML: %s' % (path, exc))


def deep_merge(base, extra):
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------- Docker

def docker_daemon_json(text, path, runtime_path, default_runtime, cdi):
    """The user's daemon.json with the NVIDIA runtime merged in.

    ``text``: the file's content (None when absent). Returns ``content`` (None when nothing
    changes), ``changed_keys`` (what the role sets), ``data``.
    """
    if text is None or not text.strip():
        data = {}
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError('%s is not valid JSON (%s): fix or remove it; the role merges into it and never '
                              'overwrites it' % (path, exc))
        except RecursionError:
            raise ConfigError('%s nests deeper than Python\'s JSON reader follows: fix or remove it; the role '
                              'merges into it and never overwrites it' % path)
        if not isinstance(data, dict):
            raise ConfigError('%s must hold a JSON object, it holds a %s' % (path, type(data).__name__))
        if _depth(data) > MAX_JSON_DEPTH:
            raise ConfigError('%s nests deeper than %d levels; no daemon.json setting does: fix or remove it'
                              % (path, MAX_JSON_DEPTH))
    want = {'runtimes': {'nvidia': {'path': runtime_path, 'args': []}}}
    if default_runtime:
        want['default-runtime'] = 'nvidia'
    if cdi:
        want['features'] = {'cdi': True}
    runtimes = data.get('runtimes', {})
    if not isinstance(runtimes, dict):
        raise ConfigError('%s: "runtimes" must be a JSON object, it is a %s' % (path, type(runtimes).__name__))
    if not default_runtime and data.get('default-runtime') == 'nvidia':
        # The role made nvidia the default earlier and the user no longer wants it.
        data = dict((k, v) for k, v in data.items() if k != 'default-runtime')
    merged = deep_merge(data, want)
    original = json.loads(text) if text and text.strip() else {}
    changed = sorted(set(k for k in _flat_keys(merged) if _get(merged, k) != _get(original, k))
                     | set(k for k in _flat_keys(original) if _get(merged, k) is None))
    if text is not None and merged == original:
        return {'content': None, 'changed_keys': [], 'data': merged}
    return {'content': json.dumps(merged, indent=2) + '\n', 'changed_keys': changed, 'data': merged}


# daemon.json settings nest a few levels (runtimes.<name>.args); deeper files are refused before the
# role's recursive helpers walk them.
MAX_JSON_DEPTH = 32


def _depth(data):
    """The nesting depth of parsed JSON, walked without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, level)
            stack.extend((item, level + 1) for item in value)
    return deepest


def docker_keys(default_runtime, cdi):
    """The daemon.json keys the role manages (the status record)."""
    return ['runtimes.nvidia'] + (['default-runtime'] if default_runtime else []) + (['features.cdi'] if cdi else [])


def _flat_keys(data, prefix=''):
    for key, value in data.items():
        name = prefix + key
        if isinstance(value, dict) and value:
            yield from _flat_keys(value, name + '.')
        else:
            yield name


def _get(data, dotted):
    for part in dotted.split('.'):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


# --------------------------------------------------------------------------- containerd

def containerd_version(data, path, binary_major):
    """The config version of the main file (2 or 3), or the one a new file gets."""
    if data is None:
        version = 3 if (binary_major or 1) >= 2 else 2
        return {'value': version, 'reason': '%s does not exist: containerd %s reads version %d'
                % (path, binary_major or 'of unknown version', version)}
    version = data.get('version', 1)
    if isinstance(version, bool) or not isinstance(version, int) or version not in CONTAINERD_CRI:
        raise ConfigError('%s has config version %s; the role knows versions 2 (containerd 1.x) and 3 (containerd '
                          '2.x). Migrate it first (containerd config migrate)' % (path, version))
    return {'value': version, 'reason': '%s declares version %d' % (path, version)}


def containerd_cri_section(data, path, version):
    """The CRI plugin's section of the parsed main config.toml (``{}`` when it has none).

    A file whose ``plugins`` or CRI section is not a table (``plugins = "x"``) is refused naming
    the file, instead of crashing on it.
    """
    plugins = (data or {}).get('plugins', {})
    if not isinstance(plugins, dict):
        raise ConfigError('%s: "plugins" must be a table, it is a %s; fix the file (the role merges into it and '
                          'never overwrites it)' % (path, type(plugins).__name__))
    section = plugins.get(CONTAINERD_CRI[version], {})
    if not isinstance(section, dict):
        raise ConfigError('%s: plugins."%s" must be a table, it is a %s'
                          % (path, CONTAINERD_CRI[version], type(section).__name__))
    containerd = section.get('containerd', {})
    runtimes = containerd.get('runtimes', {}) if isinstance(containerd, dict) else None
    if not isinstance(runtimes, dict):
        raise ConfigError('%s: plugins."%s".containerd.runtimes must be a table'
                          % (path, CONTAINERD_CRI[version]))
    return section


# What nvidia-ctk runtime configure falls back to when no low-level runtime is configured
# (NVIDIA/nvidia-container-toolkit pkg/config/engine/containerd/config.go, GetDefaultRuntimeOptions),
# less its empty runtime_root and runtime_engine (empty is containerd's default for both).
_FALLBACK_RUNTIME = {'runtime_type': 'io.containerd.runc.v2', 'privileged_without_host_devices': False}


def containerd_nvidia_runtime(user_section, runtime_path):
    """The nvidia runtime's table, as ``nvidia-ctk runtime configure`` builds it.

    NVIDIA/nvidia-container-toolkit pkg/config/engine/containerd/config.go (AddRuntime,
    GetDefaultRuntimeOptions) and pkg/config/engine/engine.go (GetLowLevelRuntimes): the whole
    table of the first configured low-level runtime among the default runtime (unless it is an
    nvidia* one), ``runc`` and ``crun`` is copied, ``SystemdCgroup`` and every other option
    included, then ``runtime_type`` is set where empty and ``options.BinaryName`` to the NVIDIA
    runtime. So pods with ``runtimeClassName: nvidia`` use the same cgroup driver as kubelet.
    Returns ``value`` (the table) and ``reason`` (which runtime it was copied from).
    """
    containerd = (user_section or {}).get('containerd') or {}
    runtimes = containerd.get('runtimes') or {}
    candidates = []
    default = containerd.get('default_runtime_name')
    if isinstance(default, str) and default and not default.startswith('nvidia'):
        candidates.append(default)
    candidates.extend(name for name in ('runc', 'crun') if name not in candidates)
    for name in candidates:
        if isinstance(runtimes.get(name), dict):
            table = copy.deepcopy(runtimes[name])
            reason = 'a copy of the %s runtime\'s table of the main config.toml (as nvidia-ctk runtime configure ' \
                     'does), with BinaryName set to the NVIDIA runtime' % name
            break
    else:
        table = copy.deepcopy(_FALLBACK_RUNTIME)
        reason = ('no %s runtime is configured in the main config.toml: nvidia-ctk runtime configure\'s defaults '
                  '(containerd\'s own runc defaults apply to the rest)' % ' or '.join(candidates))
    if not table.get('runtime_type'):
        table['runtime_type'] = _FALLBACK_RUNTIME['runtime_type']
    options = table.get('options')
    table['options'] = dict(options) if isinstance(options, dict) else {}
    table['options']['BinaryName'] = runtime_path
    return {'value': table, 'reason': reason}


def containerd_dropin(version, runtime_path, default_runtime, cdi, user_section=None):
    """The role's drop-in for config ``version`` (2 or 3).

    containerd replaces a plugin's whole section with the one of an imported file (it does not
    merge inside a plugin), so the drop-in carries a copy of the user's CRI section of the main
    file (``user_section``) with the nvidia runtime merged in: the user's sandbox image, registry
    and runc settings stay in effect. The copy is refreshed from the main file on every run. The
    nvidia runtime inherits the low-level runtime's options (``containerd_nvidia_runtime``).
    """
    cri = CONTAINERD_CRI[version]
    runtime = containerd_nvidia_runtime(user_section, runtime_path)['value']
    plugin = copy.deepcopy(user_section or {})
    plugin.setdefault('containerd', {}).setdefault('runtimes', {})['nvidia'] = runtime
    if default_runtime:
        plugin['containerd']['default_runtime_name'] = 'nvidia'
    if cdi:
        plugin['enable_cdi'] = True
        plugin['cdi_spec_dirs'] = list(CDI_SPEC_DIRS)
    note = ('# The CRI section of the main config.toml with the nvidia runtime merged in (containerd replaces\n'
            '# a plugin\'s whole section from an imported file, so the user\'s settings are carried here).\n')
    return HEADER + note + dump_toml({'version': version, 'plugins': {cri: plugin}})


def missing_settings(user_section, effective_section, prefix=''):
    """Settings of ``user_section`` (the drop-in's intended CRI section) that ``effective_section``
    (containerd config dump) lacks or changes."""
    missing = []
    for key, value in (user_section or {}).items():
        name = prefix + key
        there = (effective_section or {}).get(key) if isinstance(effective_section, dict) else None
        if isinstance(value, dict):
            missing.extend(missing_settings(value, there if isinstance(there, dict) else {}, name + '.'))
        elif there != value:
            missing.append(name)
    return missing


# Whole lines of a TOML text: a line ends at a newline or at the end of the text.
_IMPORTS_RE = re.compile(r'^imports[ \t]*=[ \t]*\[[^\]]*\]([ \t]*#[^\n]*)?[ \t]*(?=\n|\Z)', re.M)
_VERSION_RE = re.compile(r'^version[ \t]*=[ \t]*[0-9]+[ \t]*(#[^\n]*)?(?=\n|\Z)', re.M)
_TABLE_RE = re.compile(r'^\s*\[', re.M)


def containerd_main(text, path, import_glob, version):
    """The user's main config.toml with ``import_glob`` in its top-level ``imports``.

    Only the ``imports`` line is edited (or added after ``version``); comments and every other
    setting stay byte for byte. The result must parse and hold the same settings.
    Returns ``content`` (None when nothing changes) and ``reason``.
    """
    if text is None:
        content = HEADER + 'version = %d\nimports = [%s]\n' % (version, json.dumps(import_glob))
        return {'content': content, 'reason': '%s did not exist: created with the import only' % path}
    data = parse_toml(text, path)
    imports = data.get('imports', [])
    if not isinstance(imports, list):
        raise ConfigError('%s: "imports" must be an array of paths' % path)
    if import_glob in imports:
        return {'content': None, 'reason': '%s already imports %s' % (path, import_glob)}
    first_table = _TABLE_RE.search(text)
    top = text[:first_table.start()] if first_table else text
    new_line = 'imports = [%s]' % ', '.join(json.dumps(i) for i in imports + [import_glob])
    match = _IMPORTS_RE.search(top)
    if 'imports' in data and not match:
        raise ConfigError('%s: the "imports" array is not where the role can edit it (a top-level line '
                          'imports = [...] before the first table); move it there so that the role can add %s'
                          % (path, import_glob))
    if match:
        content = text[:match.start()] + new_line + (match.group(1) or '') + text[match.end():]
    else:
        vmatch = _VERSION_RE.search(top)
        if vmatch:
            content = text[:vmatch.end()] + '\n' + new_line + text[vmatch.end():]
        else:
            content = new_line + '\n' + text
    after = parse_toml(content, path)
    before = dict(data, imports=imports + [import_glob])
    if after != before:
        raise ConfigError('%s: adding %s to "imports" would change other settings; add it by hand' % (path, import_glob))
    return {'content': content, 'reason': '%s now imports %s' % (path, import_glob)}


def containerd_dump_has_nvidia(dump_text, version):
    """Whether ``containerd config dump`` shows the nvidia runtime (the merged result)."""
    return 'nvidia' in ((containerd_dump_section(dump_text, version).get('containerd') or {}).get('runtimes') or {})


def containerd_dump_section(dump_text, version):
    """The CRI section of ``containerd config dump``."""
    data = parse_toml(dump_text, 'the output of containerd config dump')
    return (data.get('plugins') or {}).get(CONTAINERD_CRI[version]) or {}


# --------------------------------------------------------------------------- CRI-O

def crio_dropin(runtime_path, default_runtime):
    runtime = {}
    if default_runtime:
        runtime['default_runtime'] = 'nvidia'
    runtime['runtimes'] = {'nvidia': {'runtime_path': runtime_path, 'runtime_type': 'oci'}}
    return HEADER + dump_toml({'crio': {'runtime': runtime}})


# --------------------------------------------------------------------------- runtime config

def runtime_config(text, path, settings, mode):
    """/etc/nvidia-container-runtime/config.toml with the user's settings merged in.

    The file belongs to the toolkit package; its settings are kept and the user's
    (``settings``, plus ``mode`` as nvidia-container-runtime.mode) override them. Returns
    ``content`` (None when nothing changes) and ``data``.
    """
    data = parse_toml(text, path) if text else {}
    want = dict(settings or {})
    if mode:
        want = deep_merge(want, {'nvidia-container-runtime': {'mode': mode}})
    merged = deep_merge(data, want)
    if text and merged == data:
        return {'content': None, 'data': merged}
    return {'content': HEADER + '# The package\'s settings with nvidia_container_toolkit_runtime_settings merged in.\n'
            + dump_toml(merged), 'data': merged}
