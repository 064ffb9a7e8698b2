# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU settings of the nvidia_driver role, decided per GPU from one nvidia-smi read.

``query_args()`` is the one read (``--format=csv,nounits`` with its header, so that columns
are found by name); ``parse_query()`` turns its text into one row per GPU; ``decide()``
compares each row with what the role wants - persistence mode, power limit (within the
GPU's own range), application clocks, MIG mode - and returns, per GPU and setting, the
wanted and current value, the action (``none``, ``set``, ``not_asked``, ``unsupported``,
``deprecated``, ``unreadable``), its reason and the exact nvidia-smi argv for ``set``.

What nvidia-smi cannot give is never compared with a wanted value: drivers 590 and later
answer application-clock queries with ``[Requested functionality has been deprecated]``,
older ones ``[N/A]`` or ``[Not Supported]``; such a GPU gets no ``-ac`` command (comparing
the text with the wanted clocks ran ``nvidia-smi -ac`` on every play and never converged).
The role offers no ECC setting, so ECC is not read. Pure functions, standard library only,
Python 3.8 compatible (runs on the target inside nvidia_driver_gpu_settings).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import normalize_bus_id, nvml_bus_id

FIELDS = (
    "pci.bus_id", "persistence_mode", "power.limit", "power.min_limit", "power.max_limit",
    "clocks.applications.memory", "clocks.applications.graphics", "mig.mode.current", "mig.mode.pending",
)
SETTINGS = ("persistence", "power_limit", "application_clocks", "mig")
DEPRECATED = "[Requested functionality has been deprecated]"
_UNSUPPORTED = ("", "N/A", "[N/A]", "Not Supported", "[Not Supported]")
_BRACKETED = re.compile(r"\[[^\]\n]*\]\Z")
_UNIT = re.compile(r"\s*\[[^\]\n]*\]\Z")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?\Z")
_ON = ("enabled", "on")
_OFF = ("disabled", "off")


class SettingsError(ValueError):
    """Input or nvidia-smi output that no decision can be made from."""


def query_args(binary="nvidia-smi", fields=FIELDS):
    """The one read: every field the decision needs, with its header, without units."""
    return [binary, "--query-gpu=" + ",".join(fields), "--format=csv,nounits"]


def _field_name(cell):
    """``power.limit [W]`` -> ``power.limit`` (the header keeps units even with nounits)."""
    return _UNIT.sub("", cell.strip()).strip()


def parse_query(text, fields=None):
    """The CSV text of ``--query-gpu`` -> list of ``{field: raw text}`` rows.

    ``fields`` names the columns of header-less output (``noheader``); without it the first
    non-empty line is the header. Each row gains ``bus_id`` (sysfs form) when the query holds
    ``pci.bus_id``. Raises SettingsError on a row with the wrong number of cells or a bus id
    that is not a PCI address.
    """
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if fields is None:
        if not lines:
            return []
        fields = [_field_name(cell) for cell in lines[0].split(",")]
        lines = lines[1:]
    fields = list(fields)
    rows = []
    for lineno, line in enumerate(lines, 1):
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(fields):
            raise SettingsError("nvidia-smi query, row %d: %d fields, expected %d (%s): %r"
                                % (lineno, len(cells), len(fields), ", ".join(fields), line))
        row = dict(zip(fields, cells))
        if "pci.bus_id" in row:
            try:
                row["bus_id"] = normalize_bus_id(row["pci.bus_id"])
            except ValueError as exc:
                raise SettingsError("nvidia-smi query, row %d: %s" % (lineno, exc))
        rows.append(row)
    return rows


def reading(text):
    """One cell -> ``(kind, value)``: ``value`` (text), ``deprecated``, ``unsupported`` or ``unreadable``."""
    text = (text or "").strip()
    if text == DEPRECATED:
        return "deprecated", text
    if text in _UNSUPPORTED:
        return "unsupported", text
    if _BRACKETED.match(text):
        return "unreadable", text
    return "value", text


def _number(text):
    kind, value = reading(text)
    if kind != "value":
        return kind, value
    # "292.00", "105", and nothing else: nvidia-smi prints plain decimals with nounits.
    if not _NUMBER.match(value):
        return "unreadable", value
    number = float(value)
    if math.isinf(number) or math.isnan(number):
        return "unreadable", value
    return "value", int(number) if number == int(number) else number


def _mode(text):
    kind, value = reading(text)
    if kind != "value":
        return kind, value
    lowered = value.lower()
    if lowered in _ON:
        return "value", True
    if lowered in _OFF:
        return "value", False
    return "unreadable", value


def _watts(number):
    return ("%d" % number) if number == int(number) else ("%.2f" % number).rstrip("0")


def _record(wanted, current, action, reason, argv=None):
    return {"wanted": wanted, "current": current, "action": action, "reason": reason, "argv": argv}


def _not_readable(kind, text, what):
    if kind == "deprecated":
        return ("the driver answers %s for the %s (drivers 590 and later): it cannot be set with nvidia-smi "
                "on this driver, nothing is run" % (text, what))
    if kind == "unsupported":
        return "nvidia-smi answers %s for the %s: not supported on this GPU, nothing is run" % (text or "nothing", what)
    return "nvidia-smi answers %s for the %s: not readable now, nothing is run" % (text, what)


def _persistence(row, target, wanted):
    if wanted is None:
        return _record(None, None, "not_asked", "persistence mode is left as it is")
    kind, current = _mode(row.get("persistence_mode"))
    if kind != "value":
        return _record(wanted, None, kind if kind != "deprecated" else "unsupported",
                       _not_readable(kind, current, "persistence mode"))
    word = "enabled" if wanted else "disabled"
    if current == wanted:
        return _record(wanted, current, "none", "persistence mode is %s%s" % (
            word, " (kept by nvidia-persistenced)" if wanted else ""))
    return _record(wanted, current, "set",
                   "persistence mode is %s, nvidia_driver_persistence wants it %s"
                   % ("enabled" if current else "disabled", word),
                   ["nvidia-smi", "-i", target, "-pm", "1" if wanted else "0"])


def _power_limit(row, target, wanted, errors):
    if wanted is None:
        return _record(None, None, "not_asked", "nvidia_driver_power_limit_watts is null: the power limit is left alone")
    # The range first: a limit outside it is refused whatever the current value reads.
    bounds = [_number(row.get(name)) for name in ("power.min_limit", "power.max_limit")]
    for kind, text in bounds:
        if kind != "value":
            return _record(wanted, None, kind if kind != "deprecated" else "unsupported",
                           _not_readable(kind, text, "power limit range"))
    low, high = bounds[0][1], bounds[1][1]
    if not low <= wanted <= high:
        errors.append("nvidia_driver_power_limit_watts %d is outside the range of GPU %s (%s to %s W); "
                      "nothing was changed" % (wanted, row["bus_id"], _watts(low), _watts(high)))
        return _record(wanted, None, "refused", "outside the GPU's range %s to %s W" % (_watts(low), _watts(high)))
    kind, current = _number(row.get("power.limit"))
    if kind != "value":
        return _record(wanted, None, kind if kind != "deprecated" else "unsupported",
                       _not_readable(kind, current, "power limit"))
    if abs(current - wanted) < 1:
        return _record(wanted, current, "none", "the power limit is %s W" % _watts(current))
    return _record(wanted, current, "set", "the power limit is %s W, nvidia_driver_power_limit_watts wants %d W "
                   "(GPU range %s to %s W)" % (_watts(current), wanted, _watts(low), _watts(high)),
                   ["nvidia-smi", "-i", target, "-pl", str(wanted)])


def _application_clocks(row, target, wanted):
    if not wanted:
        return _record(None, None, "not_asked", "nvidia_driver_application_clocks is empty: the clocks are left alone")
    memory = _number(row.get("clocks.applications.memory"))
    graphics = _number(row.get("clocks.applications.graphics"))
    for kind, text in (memory, graphics):
        if kind != "value":
            return _record(wanted, None, kind, _not_readable(kind, text, "application clocks"))
    current = {"memory_mhz": int(memory[1]), "graphics_mhz": int(graphics[1])}
    if current == wanted:
        return _record(wanted, current, "none", "the application clocks are %d,%d MHz (memory,graphics)"
                       % (current["memory_mhz"], current["graphics_mhz"]))
    return _record(wanted, current, "set", "the application clocks are %d,%d MHz, nvidia_driver_application_clocks "
                   "wants %d,%d MHz (memory,graphics)" % (current["memory_mhz"], current["graphics_mhz"],
                                                          wanted["memory_mhz"], wanted["graphics_mhz"]),
                   ["nvidia-smi", "-i", target, "-ac", "%d,%d" % (wanted["memory_mhz"], wanted["graphics_mhz"])])


def _mig(row, target, mig):
    if not mig.get("apply") or row["bus_id"] not in mig.get("apply_to", []):
        return _record(None, None, "not_asked", mig.get("reason") or "the plan applies no MIG mode to this GPU")
    wanted = mig["mode"] == "enabled"
    current_kind, current = _mode(row.get("mig.mode.current"))
    pending_kind, pending = _mode(row.get("mig.mode.pending"))
    if current_kind != "value" and pending_kind != "value":
        return _record(mig["mode"], None, "unsupported",
                       _not_readable(current_kind, row.get("mig.mode.current", ""), "MIG mode"))
    effective = pending if pending_kind == "value" else current
    shown = {"current": _word(current, current_kind), "pending": _word(pending, pending_kind)}
    if effective == wanted:
        reason = "MIG mode is %s" % mig["mode"]
        if current_kind == "value" and current != effective:
            reason += " (pending: takes effect after a GPU reset or a reboot)"
        return _record(mig["mode"], shown, "none", reason)
    return _record(mig["mode"], shown, "set", "MIG mode is %s, the plan wants it %s" % (
        _word(effective, "value"), mig["mode"]), ["nvidia-smi", "-i", target, "-mig", "1" if wanted else "0"])


def _word(value, kind):
    if kind != "value":
        return None
    return "enabled" if value else "disabled"


def check_wanted(wanted):
    """Validate what the role asks for; raises SettingsError naming the variable."""
    limit = wanted.get("power_limit_watts")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 50 <= limit <= 2000):
        raise SettingsError("nvidia_driver_power_limit_watts must be an integer from 50 to 2000 (W), got %r" % (limit,))
    clocks = wanted.get("application_clocks") or {}
    if not isinstance(clocks, dict):
        raise SettingsError("nvidia_driver_application_clocks must be a dict, got %r" % (clocks,))
    if clocks:
        given = dict((k, v) for k, v in clocks.items() if v is not None)
        if sorted(given) != ["graphics_mhz", "memory_mhz"] or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 < v < 100000 for v in given.values()):
            raise SettingsError("nvidia_driver_application_clocks needs both memory_mhz and graphics_mhz as "
                                "positive integers (MHz), got %r" % (clocks,))
    persistence = wanted.get("persistence")
    if persistence is not None and not isinstance(persistence, bool):
        raise SettingsError("persistence must be true, false or null, got %r" % (persistence,))
    mig = wanted.get("mig") or {}
    if mig.get("apply") and mig.get("mode") not in ("enabled", "disabled"):
        raise SettingsError("nvidia_driver_mig_mode: the plan applies MIG mode %r (enabled or disabled)"
                            % (mig.get("mode"),))


def decide(rows, wanted):
    """Per GPU and setting: what is, what is wanted, what to run and why.

    ``rows``: ``parse_query()`` output (needs ``pci.bus_id`` and the FIELDS). ``wanted``:
    ``persistence`` (bool or None), ``power_limit_watts`` (int or None),
    ``application_clocks`` ({} or memory_mhz and graphics_mhz), ``mig`` (the plan's ``mig``).
    Returns ``gpus`` (one record per GPU, by bus id), ``commands`` (``[{bus_id, setting,
    argv}]`` in GPU order), ``errors`` (a power limit outside a GPU's range, naming the
    variable: nothing may be run then) and ``reason``.
    """
    check_wanted(wanted)
    clocks = wanted.get("application_clocks") or {}
    clocks = dict((k, clocks[k]) for k in ("memory_mhz", "graphics_mhz")) if clocks else {}
    errors = []
    gpus = []
    commands = []
    for row in sorted(rows, key=lambda r: r.get("bus_id", "")):
        if "bus_id" not in row:
            raise SettingsError("nvidia-smi query without pci.bus_id: %r" % (row,))
        target = nvml_bus_id(row["bus_id"])
        record = {
            "pci_bus_id": row["bus_id"],
            "persistence": _persistence(row, target, wanted.get("persistence")),
            "power_limit": _power_limit(row, target, wanted.get("power_limit_watts"), errors),
            "application_clocks": _application_clocks(row, target, clocks),
            "mig": _mig(row, target, wanted.get("mig") or {}),
        }
        gpus.append(record)
        for setting in SETTINGS:
            if record[setting]["action"] == "set":
                commands.append({"bus_id": row["bus_id"], "setting": setting, "argv": record[setting]["argv"]})
    if errors:
        commands = []
        reason = "; ".join(errors)
    elif not gpus:
        reason = "nvidia-smi lists no GPU: nothing to set"
    elif commands:
        reason = "%d setting(s) differ on %d of %d GPU(s)" % (
            len(commands), len(set(c["bus_id"] for c in commands)), len(gpus))
    else:
        reason = "every asked-for setting that nvidia-smi can set already holds on all %d GPU(s)" % len(gpus)
    left = ["%s %s (%s)" % (gpu["pci_bus_id"], setting, gpu[setting]["action"]) for gpu in gpus for setting in SETTINGS
            if gpu[setting]["action"] in ("unsupported", "deprecated", "unreadable")]
    if left and not errors:
        reason += "; asked for but not settable, nothing run: " + ", ".join(left)
    return {"gpus": gpus, "commands": commands, "errors": errors, "reason": reason}
