# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Numbers by their domain (issue 37): the checks value_kinds.py runs for its number kinds - integers
in a range, ports, listen addresses, Prometheus durations and scrape jobs, GPU power and clocks, batch
sizes and percentages - each returning the problem naming the variable, or None / [].

Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.node_exporter import parse_listen_address


def shown(value):
    text = value if not isinstance(value, str) or len(value) <= 80 else value[:77] + '...'
    return repr(text)


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# Numbers by their domain
# ---------------------------------------------------------------------------------------------
def int_problem(name, value, params):
    if value is None and 'empty' in params:
        return None
    if params.get('key'):
        if not isinstance(value, dict) or params['key'] not in value:
            return None
        name, value = '%s.%s' % (name, params['key']), value[params['key']]
    low, high = params.get('low', 0), params.get('high', 2 ** 31 - 1)
    if not is_int(value) or not low <= value <= high:
        return '%s must be a whole number from %d to %d %s, got %s' % (
            name, low, high, params.get('unit', ''), shown(value))
    return None


def port_problem(name, value):
    if not is_int(value) or not 1 <= value <= 65535:
        return '%s must be a TCP port from 1 to 65535, got %s' % (name, shown(value))
    return None


_LISTEN = re.compile(r'(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]*):(?P<port>[0-9]+)')


def listen_port(value):
    """The port of a HOST:PORT listen address, or None."""
    match = _LISTEN.fullmatch(value) if isinstance(value, str) else None
    return int(match.group('port')) if match else None


def listen_problem(name, value, params):
    # the role's own parser where it has one (it ran only in host_plan or on the host)
    if params.get('check') == 'node_exporter':
        try:
            parse_listen_address(value, name)
        except ValueError as exc:
            return str(exc)
        return None
    if params.get('check') == 'dcgm':
        error = dcgm.check_address(value, name)
        return error['message'] if error else None
    match = _LISTEN.fullmatch(value) if isinstance(value, str) else None
    if not match:
        return '%s must be HOST:PORT (or :PORT), got %s' % (name, shown(value))
    port = int(match.group('port'))
    if not 1 <= port <= 65535:
        return '%s: port %d of %s is outside 1-65535' % (name, port, shown(value))
    return None


_DURATION = re.compile(r'(?:([0-9]+)y)?(?:([0-9]+)w)?(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?'
                       r'(?:([0-9]+)ms)?')
_DURATION_MS = (365 * 86400000, 7 * 86400000, 86400000, 3600000, 60000, 1000, 1)


def duration_ms(value):
    """Milliseconds of a Prometheus duration (units y w d h m s ms, each once, in that order), or None."""
    match = _DURATION.fullmatch(value) if isinstance(value, str) and value else None
    if not match:
        return None
    return sum(int(n) * ms for n, ms in zip(match.groups(), _DURATION_MS) if n)


def duration_problem(name, value, params):
    ms = duration_ms(value)
    high = params.get('max_s', 86400)
    if ms is None:
        return ('%s: %s is not a Prometheus duration (units y w d h m s ms, each at most once, in that order), '
                'e.g. 30s or 1m30s' % (name, shown(value)))
    if ms < 1000:
        return '%s: %s is below one second (0s scrapes or evaluates nothing); give 1s to %ds, e.g. 30s' % (
            name, shown(value), high)
    if ms > high * 1000:
        return ('%s: %s is longer than %ds: Prometheus marks a series stale after 5m without a sample, so every '
                'series would have gaps; give 1s to %ds' % (name, shown(value), high, high))
    return None


def scrape_configs_problems(name, jobs, inputs):
    """scrape_interval / scrape_timeout of each extra job (the global interval where it sets none)."""
    found = []
    default = duration_ms(inputs.get('prometheus_scrape_interval') or '') or 60000
    for index, job in enumerate(jobs or []):
        if not isinstance(job, dict):
            continue
        where = '%s[%s]' % (name, job.get('job_name', index))
        interval = default
        for key in ('scrape_interval', 'scrape_timeout'):
            if key not in job:
                continue
            limit = {'max_s': 300 if key == 'scrape_interval' else 86400}
            error = duration_problem('%s.%s' % (where, key), job[key], limit)
            found.append(error)
            if error is None and key == 'scrape_interval':
                interval = duration_ms(job[key])
        timeout = duration_ms(job.get('scrape_timeout')) if 'scrape_timeout' in job else None
        if timeout and timeout > interval:
            found.append('%s.scrape_timeout %s is longer than its scrape interval (%s ms): Prometheus refuses the '
                         'configuration; give a timeout at most the interval' % (where, shown(job['scrape_timeout']),
                                                                                 interval))
    return [f for f in found if f]


def _gpus(context):
    facts = (context or {}).get('facts') or {}
    gpus = facts.get('gpus') if isinstance(facts, dict) else None
    return [g for g in gpus or [] if isinstance(g, dict)]


POWER_RANGE = (50, 2000)
CLOCK_RANGES = {'graphics_mhz': (100, 4000), 'memory_mhz': (100, 15000)}


def power_problems(name, value, context):
    if value is None:
        return []
    low, high = POWER_RANGE
    if not is_int(value) or not low <= value <= high:
        return ['%s must be a whole number of watts from %d to %d (or null), got %s; each GPU\'s own range is '
                'checked on the host before nvidia-smi -pl runs' % (name, low, high, shown(value))]
    found = []
    for gpu in _gpus(context):
        lo, hi = gpu.get('power_min_limit_w'), gpu.get('power_max_limit_w')
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and not lo <= value <= hi:
            found.append('%s: %d W is outside the power limit range of GPU %s (%s, %g to %g W, from the probe); give '
                         'a value in that range' % (name, value, gpu.get('pci_bus_id'), gpu.get('name') or 'GPU',
                                                    lo, hi))
    return found


_CLOCK_WHAT = {'graphics_mhz': 'graphics', 'memory_mhz': 'memory'}


def _gpu_label(position, gpu):
    index = gpu.get('index') if is_int(gpu.get('index')) else position
    return 'GPU %s (%s, %s)' % (index, gpu.get('name') or 'model unknown', gpu.get('pci_bus_id') or 'bus unknown')


def _requested_clocks(value):
    """{key: MHz} of the clocks asked for that are within the plausible range (checked first)."""
    if not isinstance(value, dict):
        return {}
    return dict((key, value[key]) for key, (low, high) in CLOCK_RANGES.items()
                if is_int(value.get(key)) and low <= value[key] <= high)


def clocks_problems(name, value, context=None):
    """A requested clock pair: each clock within the plausible range, then, against the GPUs the probe
    saw (``context['facts']``), not above each GPU's maximum (``max_clocks`` of gpu_facts)."""
    if not value:
        return []
    if not isinstance(value, dict):
        return ['%s must be {memory_mhz, graphics_mhz}, got %s' % (name, shown(value))]
    found = []
    for key, (low, high) in sorted(CLOCK_RANGES.items()):
        number = value.get(key)
        if number is None:
            continue
        if not is_int(number) or not low <= number <= high:
            found.append('%s.%s must be a whole number of MHz from %d to %d, got %s; the pair must be one that '
                         '`nvidia-smi -q -d SUPPORTED_CLOCKS` lists, which nvidia-smi -ac checks on the host'
                         % (name, key, low, high, shown(number)))
    requested = _requested_clocks(value)
    for position, gpu in enumerate(_gpus(context)):
        maxima = gpu.get('max_clocks') if isinstance(gpu.get('max_clocks'), dict) else {}
        for key, number in sorted(requested.items()):
            highest = maxima.get(key)
            if is_int(highest) and highest > 0 and number > highest:
                found.append('%s.%s: %d MHz is above the maximum %s clock of %s: %d MHz (from the probe); give at '
                             'most %d MHz, a pair `nvidia-smi -q -d SUPPORTED_CLOCKS` lists'
                             % (name, key, number, _CLOCK_WHAT[key], _gpu_label(position, gpu), highest, highest))
    return found


def clocks_notices(name, value, context=None):
    """What the clock check could not check: per requested clock, the GPUs whose maximum the probe did
    not read ("not checked: maximum unknown"); nothing where no probe data is at hand (the plan checks
    it with this run's probe) or no clock is requested."""
    requested = _requested_clocks(value)
    notices = []
    for key in sorted(requested):
        unknown = []
        for position, gpu in enumerate(_gpus(context)):
            maxima = gpu.get('max_clocks') if isinstance(gpu.get('max_clocks'), dict) else {}
            highest = maxima.get(key)
            if not (is_int(highest) and highest > 0):
                unknown.append(_gpu_label(position, gpu))
        if unknown:
            notices.append('%s.%s: %d MHz not checked: maximum unknown for %s (the probe read no maximum %s clock); '
                           'nvidia-smi -ac checks the pair on the host' % (
                               name, key, requested[key], ', '.join(unknown), _CLOCK_WHAT[key]))
    return notices


_PERCENT = re.compile(r'([0-9]+(?:\.[0-9]+)?)%')


def serial_problem(name, value):
    items = value if isinstance(value, list) else [value]
    if not items:
        return '%s: an empty list runs no batch; give a number, a percentage or a list of them' % name
    for item in items:
        if is_int(item) and item >= 1:
            continue
        if isinstance(item, str) and re.fullmatch(r'[1-9][0-9]*', item):
            continue
        match = _PERCENT.fullmatch(item) if isinstance(item, str) else None
        if match and 0 < float(match.group(1)) <= 100:
            continue
        return ('%s: %s is not a batch size: give a whole number of hosts (1 or more), a percentage above 0%% and at '
                'most 100%% ("20%%"), or a list of them' % (name, shown(item)))
    return None


def percent_problem(name, value):
    number = int(value) if isinstance(value, str) and re.fullmatch(r'[0-9]+', value) else value
    if not is_int(number) or not 0 <= number <= 100:
        return '%s must be a whole number from 0 to 100 (percent of a batch), got %s' % (name, shown(value))
    return None
