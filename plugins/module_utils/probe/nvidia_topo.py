# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Read and write the text of ``nvidia-smi topo -m``.

Used on targets (``gpu_facts`` at its nvidia-smi depth) and on the controller
(the ``parse_nvidia_topo`` / ``render_nvidia_topo`` filters). Standard library only.

``parse_nvidia_topo(text)`` returns::

    {"gpus": [{"name": "GPU0", "cpu_affinity": [0, 1, ...], "numa_affinity": 0,
               "gpu_numa_id": None}],            # gpu_numa_id only with that column
                                                 # numa_affinity: [0, 3, 4, ...] on Grace hosts
     "nics": [{"name": "NIC0", "device": "mlx5_0"}],
     "matrix": {"GPU0": {"GPU0": "X", "GPU1": "NV18", "NIC0": "PIX"}, "NIC0": {...}}}

Decisions:

- ``matrix`` holds every row printed (GPU rows and NIC rows), each keyed by every
  column, the self cell ``X`` included. Link codes are kept verbatim (``NV18``, ``N/A``).
- ``gpus`` and ``nics`` are in header order. A NIC column named ``NIC<n>`` takes its
  device from the ``NIC Legend`` block (``None`` without one); a column named by its
  device (``mlx5_0``, older drivers) has ``device`` equal to that name.
- ``cpu_affinity`` is a sorted list of ints (``N/A``, empty or missing: ``[]``);
  ``numa_affinity`` and ``gpu_numa_id`` are an int or ``None`` (``N/A``, empty, missing).
  On Grace hosts (GH200, GB200) ``NUMA Affinity`` is a list of nodes (``0,3-9,11-17``:
  the CPU's node and the GPU's memory nodes); ``numa_affinity`` is then a sorted list of
  ints, and stays a single int where one node is printed.
  A GPU carries ``gpu_numa_id`` only when the header has a ``GPU NUMA ID`` column.
- Lines before the header that do not start with a device name (driver warnings) are
  skipped; the matrix ends at the first blank line or ``Legend:`` line. Only the
  ``NIC Legend`` block is read after it.
- Layout: ANSI escapes (and their text left behind when the ESC byte was lost,
  ``[4m``) are removed and tabs expanded to 8 columns, so a tab-separated output and a
  terminal copy of it parse alike. Cells are runs of non-blank text. The first cells of
  a row after its label are the link codes, one per header device; what follows are
  the affinity values. When a GPU row has as many values as the header has affinity
  columns they are taken in order (nvidia-smi's own rows are ragged: a short CPU list
  is followed by one tab, ``NUMA Affinity`` by two); when it has fewer, each value goes
  to the column whose header it stands nearest to, a tie going to the later column.
- Anything that does not fit raises ``TopoParseError`` naming the 1-based line number
  and quoting the line; nothing half-parsed is returned.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvidia_sources

# The codes of the matrix, built from nvidia_sources.LINK_CODE_ROWS (each row with its source).
LINK_CODES = tuple(row['code'] for row in nvidia_sources.LINK_CODE_ROWS)
_LINK_CODE_RE = re.compile(r'^(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|N/A)\Z')
# ESC[4m ... ESC[0m, and the same text where a web page dropped the ESC byte.
_ESCAPE_RE = re.compile(r'\x1b?\[[0-9;]*m')
_GPU_NAME_RE = re.compile(r'^GPU\d+\Z')
_NIC_INDEX_NAME_RE = re.compile(r'^NIC\d+\Z')
_DEVICE_NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_.:-]*\Z')
_INT_RE = re.compile(r'^\d+\Z')
_CPU_RANGE_RE = re.compile(r'^(\d+)(?:-(\d+))?\Z')
_NIC_LEGEND_ENTRY_RE = re.compile(r'^\s*(\S+?)\s*:\s*(\S+)\s*\Z')
_TAB_SIZE = 8
# A sanity bound, far above any kernel's NR_CPUS, so that garbage cannot ask for
# a list of billions of CPUs.
_MAX_CPU = 1 << 20

# Header text -> key in a GPU entry, in the order nvidia-smi prints them.
_AFFINITY_COLUMNS = (
    ('CPU Affinity', 'cpu_affinity'),
    ('NUMA Affinity', 'numa_affinity'),
    ('GPU NUMA ID', 'gpu_numa_id'),
)
_AFFINITY_HEADER_RE = re.compile(r'CPU\s+Affinity|NUMA\s+Affinity|GPU\s+NUMA\s+ID')
_NOT_AVAILABLE = ('', 'N/A')


class TopoParseError(ValueError):
    """Text that is not a readable ``nvidia-smi topo -m`` output.

    ``lineno`` is 1-based, ``line`` the text of that line as given.
    """

    def __init__(self, problem, lineno, line):
        self.problem = problem
        self.lineno = lineno
        self.line = line
        shown = line.replace('\x1b', '\\x1b')
        super(TopoParseError, self).__init__(
            'nvidia-smi topo -m, line {0}: {1}: "{2}"'.format(lineno, problem, shown))


def _expand_list(s, what):
    if s is None:
        return []
    text = s.strip()
    if text in _NOT_AVAILABLE:
        return []
    numbers = set()
    for part in text.split(','):
        match = _CPU_RANGE_RE.match(part.strip())
        if not match:
            raise ValueError('not a {0} list: {1!r}'.format(what, s))
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first or last > _MAX_CPU:
            raise ValueError('bad {0} range {1!r} in {2!r}'.format(what, part, s))
        numbers.update(range(first, last + 1))
    return sorted(numbers)


def expand_cpu_list(s):
    """Expand a Linux CPU list (``0-47,96-143``) into a sorted list of ints.

    ``None``, ``''`` and ``N/A`` give ``[]``. Raises ``ValueError`` on anything else
    that is not a comma-separated list of numbers and ``a-b`` ranges.
    """
    return _expand_list(s, 'CPU')


def compress_cpu_list(cpus):
    """Write CPU numbers as a Linux CPU list: ``[0, 1, 2, 5]`` -> ``'0-2,5'``; ``[]`` -> ``''``."""
    numbers = set()
    for cpu in cpus:
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
            raise ValueError('not a CPU number: {0!r}'.format(cpu))
        numbers.add(cpu)
    parts = []
    for dummy, run in itertools.groupby(enumerate(sorted(numbers)), lambda pair: pair[1] - pair[0]):
        run = [cpu for dummy_index, cpu in run]
        parts.append(str(run[0]) if len(run) == 1 else '{0}-{1}'.format(run[0], run[-1]))
    return ','.join(parts)


def _clean(line):
    """A line without escapes, with tabs expanded: what a terminal shows."""
    return _ESCAPE_RE.sub('', line.rstrip('\r')).expandtabs(_TAB_SIZE)


def _cells(clean_line):
    """(column, text) of every run of non-blank text."""
    return [(m.start(), m.group(0)) for m in re.finditer(r'\S+', clean_line)]


class _Lines:
    """The input's lines with their 1-based numbers, for error messages."""

    def __init__(self, text):
        self.raw = text.split('\n')

    def error(self, problem, index):
        line = self.raw[index].rstrip('\r') if index < len(self.raw) else ''
        return TopoParseError(problem, index + 1, line)


def _find_header(lines):
    """Index of the header line: the first one whose first cell names a GPU."""
    for index, raw in enumerate(lines.raw):
        cells = _cells(_clean(raw))
        if not cells or not _GPU_NAME_RE.match(cells[0][1]):
            continue
        if any(_LINK_CODE_RE.match(text) for dummy, text in cells[1:]):
            raise lines.error('no header line (GPU0 GPU1 ... CPU Affinity) before the matrix', index)
        return index
    first = next((i for i, raw in enumerate(lines.raw) if raw.strip()), 0)
    raise lines.error('no header line (GPU0 GPU1 ... CPU Affinity) found', first)


def _parse_header(lines, index):
    """Device columns [(start, name)] and affinity columns [(start, title, key)]."""
    clean = _clean(lines.raw[index])
    affinity = list(_AFFINITY_HEADER_RE.finditer(clean))
    device_end = affinity[0].start() if affinity else len(clean)
    devices = _cells(clean[:device_end])
    seen = set()
    for dummy, name in devices:
        if not _DEVICE_NAME_RE.match(name) or _LINK_CODE_RE.match(name):
            raise lines.error('{0!r} is not a device column name'.format(name), index)
        if name in seen:
            raise lines.error('column {0} appears twice'.format(name), index)
        seen.add(name)
    columns = []
    position = device_end
    for match in affinity:
        between = clean[position:match.start()].strip()
        if between:
            raise lines.error('unknown column {0!r}'.format(between), index)
        title = ' '.join(match.group(0).split())
        key = dict(_AFFINITY_COLUMNS)[title]
        if any(column[2] == key for column in columns):
            raise lines.error('column {0!r} appears twice'.format(title), index)
        columns.append((match.start(), title, key))
        position = match.end()
    if clean[position:].strip():
        raise lines.error('unknown column {0!r}'.format(clean[position:].strip()), index)
    return devices, columns


def _assign_values(values, columns):
    """Map a GPU row's affinity cells to columns, keeping their order: {key: text}.

    With as many cells as columns there is one way; with fewer, the cells go where the
    summed distance from each cell to its column's header is least, ties to later columns.
    """
    def cost(combo):
        distance = sum(abs(values[i][0] - columns[c][0]) for i, c in enumerate(combo))
        return distance, [-c for c in combo]
    chosen = min(itertools.combinations(range(len(columns)), len(values)), key=cost)
    return dict((columns[c][2], values[i][1]) for i, c in enumerate(chosen))


def _numa_affinity(text):
    """``0`` -> 0; ``0,3-9,11-17`` -> [0, 3, 4, ..., 17]; one node in list form -> that int; N/A -> None."""
    if text in _NOT_AVAILABLE:
        return None
    if _INT_RE.match(text):
        return int(text)
    try:
        nodes = _expand_list(text, 'NUMA node')
    except ValueError:
        raise ValueError('{0!r} is not a NUMA node, a list of them or N/A'.format(text))
    return nodes[0] if len(nodes) == 1 else nodes


def _optional_int(text):
    if text in _NOT_AVAILABLE:
        return None
    if not _INT_RE.match(text):
        raise ValueError('{0!r} is not a number or N/A'.format(text))
    return int(text)


def _gpu_entry(name, found, columns):
    entry = {
        'name': name,
        'cpu_affinity': expand_cpu_list(found.get('cpu_affinity', '')),
        'numa_affinity': _numa_affinity(found.get('numa_affinity', '')),
    }
    if any(key == 'gpu_numa_id' for dummy, dummy_title, key in columns):
        entry['gpu_numa_id'] = _optional_int(found.get('gpu_numa_id', ''))
    return entry


def _parse_rows(lines, header_index, devices, columns):
    """Read the matrix rows: (matrix, gpu affinity by name, index after the matrix)."""
    names = [name for dummy, name in devices]
    matrix = {}
    affinity = {}
    index = header_index + 1
    while index < len(lines.raw):
        clean = _clean(lines.raw[index])
        stripped = clean.strip()
        if not stripped or stripped.endswith(':'):
            break
        cells = _cells(clean)
        label = cells[0][1]
        if label not in names:
            raise lines.error('row {0!r} is not a column of the header'.format(label), index)
        if label in matrix:
            raise lines.error('row {0} appears twice'.format(label), index)
        links = [text for dummy, text in cells[1:len(names) + 1]]
        rest = cells[len(names) + 1:]
        if len(links) < len(names):
            raise lines.error('{0} link cells for {1} device columns'.format(len(links), len(names)), index)
        row = {}
        for column, code in zip(names, links):
            if not _LINK_CODE_RE.match(code):
                raise lines.error('{0!r} under {1} is not a link code ({2}); is a cell missing?'.format(
                    code, column, ', '.join(LINK_CODES)), index)
            if (code == 'X') != (column == label):
                raise lines.error('the self cell must be X, and only the self cell ({0} to {1} is {2})'.format(
                    label, column, code), index)
            row[column] = code
        if _GPU_NAME_RE.match(label):
            if len(rest) > len(columns):
                raise lines.error('{0} values after the link cells for {1} affinity columns'.format(
                    len(rest), len(columns)), index)
            try:
                affinity[label] = _gpu_entry(label, _assign_values(rest, columns), columns)
            except ValueError as exc:
                raise lines.error(str(exc), index)
        elif rest:
            raise lines.error('{0} cells for {1} device columns in a NIC row'.format(
                len(cells) - 1, len(names)), index)
        matrix[label] = row
        index += 1
    missing = [name for name in names if name not in matrix]
    if missing:
        raise lines.error('the matrix is not square: no row for {0}'.format(', '.join(missing)), header_index)
    return matrix, affinity, index


def _parse_nic_legend(lines, start, nic_names):
    """{column name: device} from the ``NIC Legend:`` block after the matrix."""
    legend = {}
    index = start
    while index < len(lines.raw) and _clean(lines.raw[index]).strip() != 'NIC Legend:':
        index += 1
    index += 1
    while index < len(lines.raw):
        clean = _clean(lines.raw[index]).strip()
        index += 1
        if not clean:
            if legend:
                break
            continue
        match = _NIC_LEGEND_ENTRY_RE.match(clean)
        if not match:
            break
        name, device = match.groups()
        if name not in nic_names:
            raise lines.error('NIC Legend names {0}, which is not a NIC column'.format(name), index - 1)
        if name in legend:
            raise lines.error('NIC Legend names {0} twice'.format(name), index - 1)
        legend[name] = device
    return legend


def parse_nvidia_topo(text):
    """Parse the output of ``nvidia-smi topo -m``; see the module docstring for the shape."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    if not isinstance(text, str):
        raise TypeError('nvidia-smi topo -m output must be text, not {0}'.format(type(text).__name__))
    lines = _Lines(text)
    header_index = _find_header(lines)
    devices, columns = _parse_header(lines, header_index)
    matrix, affinity, end = _parse_rows(lines, header_index, devices, columns)
    nic_names = [name for dummy, name in devices if not _GPU_NAME_RE.match(name)]
    legend = _parse_nic_legend(lines, end, nic_names)
    nics = []
    for name in nic_names:
        default = None if _NIC_INDEX_NAME_RE.match(name) else name
        nics.append({'name': name, 'device': legend.get(name, default)})
    gpus = [affinity[name] for dummy, name in devices if _GPU_NAME_RE.match(name)]
    return {'gpus': gpus, 'nics': nics, 'matrix': matrix}


_LEGEND_TEXT = (
    'Legend:',
    '',
    '  X    = Self',
    '  SYS  = Through PCIe and the SMP link between NUMA nodes (QPI/UPI)',
    '  NODE = Through PCIe and the link between PCIe host bridges of one NUMA node',
    '  PHB  = Through PCIe and a PCIe host bridge (the CPU)',
    '  PXB  = Through several PCIe bridges, not the host bridge',
    '  PIX  = Through at most one PCIe bridge',
    '  NV#  = Through a bonded set of # NVLinks',
)


def _text_or_na(value):
    if isinstance(value, list):
        value = compress_cpu_list(value)
    return 'N/A' if value is None or value == '' else str(value)


def render_nvidia_topo(topo):
    """Write a parsed topology back as an aligned ``nvidia-smi topo -m`` style table.

    ``parse_nvidia_topo(render_nvidia_topo(t)) == t`` for every ``t`` the parser returns.
    Raises ``ValueError`` when ``topo`` lacks a key or a matrix cell.
    """
    try:
        gpus = list(topo['gpus'])
        nics = list(topo['nics'])
        matrix = topo['matrix']
        devices = [entry['name'] for entry in gpus + nics]
        with_gpu_numa_id = any('gpu_numa_id' in entry for entry in gpus)
        header = [''] + devices + ['CPU Affinity', 'NUMA Affinity']
        if with_gpu_numa_id:
            header.append('GPU NUMA ID')
        table = [header]
        for position, entry in enumerate(gpus + nics):
            row = [entry['name']] + [matrix[entry['name']][device] for device in devices]
            if position < len(gpus):
                row += [_text_or_na(compress_cpu_list(entry.get('cpu_affinity') or [])),
                        _text_or_na(entry.get('numa_affinity'))]
                if with_gpu_numa_id:
                    row.append(_text_or_na(entry.get('gpu_numa_id')))
            table.append(row)
    except (KeyError, TypeError) as exc:
        raise ValueError('not a parsed nvidia-smi topology (missing {0})'.format(exc))
    widths = [max(len(row[i]) for row in table if i < len(row)) + 2 for i in range(len(header))]
    out = [''.join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]
    out += [''] + list(_LEGEND_TEXT)
    legend = ['  {0}: {1}'.format(entry['name'], entry['device']) for entry in nics
              if entry.get('device') not in (None, entry['name'])]
    if legend:
        out += ['', 'NIC Legend:', ''] + legend
    return '\n'.join(out) + '\n'
