# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi depth of the GPU probe: for hosts with the tool but without pynvml.

Three read-only commands, each run with a C locale by the caller's runner:

* ``nvidia-smi --query-gpu=<QUERY_FIELDS> --format=csv,noheader,nounits``
  (again without ``compute_cap`` when an old driver refuses that field, and with
  ``kmd_version`` for ``driver_version`` when a driver refuses that one: R610 deprecated
  ``Driver Version`` for ``KMD Version``, to be removed with CUDA 14);
* ``nvidia-smi --query-gpu=pci.bus_id,clocks.max.graphics,clocks.max.memory --format=csv,noheader,nounits``
  for each GPU's highest graphics and memory clocks (``--help-query-gpu``: "Maximum frequency of
  graphics (shader) clock", "Maximum frequency of memory clock"); a query of its own, so a driver
  that refuses it leaves the maxima unknown (None) and the rest of the answer as it was;
* ``nvidia-smi`` for the ``CUDA Version`` of its banner (``CUDA UMD Version`` from R610 on);
* ``nvidia-smi topo -m``, parsed by ``nvidia_topo.parse_nvidia_topo``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.versions import numeric_or_none
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvidia_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import normalize_bus_id
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import (
    TopoParseError,
    parse_nvidia_topo,
)

# Built from nvidia_sources.QUERY_FIELD_ROWS and FIELD_FALLBACK_ROWS (each row with its source).
QUERY_FIELDS = tuple(r["field"] for r in nvidia_sources.QUERY_FIELD_ROWS)
LEGACY_QUERY_FIELDS = tuple(f for f in QUERY_FIELDS if f != "compute_cap")
MAX_CLOCK_FIELDS = tuple(r["field"] for r in nvidia_sources.MAX_CLOCK_FIELD_ROWS)
# "3105" (nounits) or "3105 MHz" (as --format=csv prints it)
_MHZ = re.compile(r"([0-9]{1,6})(?: MHz)?")
# What to ask instead when a driver refuses a field (None: leave it out).
FIELD_FALLBACKS = tuple((r["field"], r["instead"]) for r in nvidia_sources.FIELD_FALLBACK_ROWS)
_NOT_AVAILABLE = ("", "[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]", "Unknown Error",
                  "[Insufficient Permissions]", "[GPU is lost]", "[Requested functionality has been deprecated]")
# nvidia-smi answers every value it cannot give with a bracketed text ("[Unknown Error]",
# "[GPU requires reset]", ...): none of them is a value.
_BRACKETED = re.compile(r"^\[.*\]\Z")
# "CUDA Version: 12.4" up to R595; "CUDA UMD Version: 13.3" from R610 on
_CUDA_RE = re.compile(r"CUDA (?:UMD )?Version:\s*([0-9]+\.[0-9]+)")


def query_args(binary, fields=QUERY_FIELDS):
    return [binary, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]


def _value(text):
    text = text.strip()
    return None if text in _NOT_AVAILABLE or _BRACKETED.match(text) else text


def _version(text):
    """``580.95.05`` as given; ``610.47 [Deprecated; ...]`` -> ``610.47``; no version -> None."""
    value = _value(text)
    if value is None:
        return None
    token = value.split()[0]
    return token if numeric_or_none(token) is not None else None


def _enabled(text):
    value = _value(text)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in ("enabled", "on", "yes", "1"):
        return True
    if lowered in ("disabled", "off", "no", "0"):
        return False
    return None


def _number(text):
    value = _value(text)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if math.isnan(number) or math.isinf(number):
        return None  # "inf", "nan": not a number a fact can hold (JSON has none)
    return int(number) if number == int(number) else number


def parse_query(text, fields=QUERY_FIELDS):
    """Rows of ``--query-gpu ... --format=csv,noheader,nounits`` -> list of GPU dicts.

    Values nvidia-smi cannot give (``[N/A]``, ``[Not Supported]``, ``[Unknown Error]``, any
    bracketed text, ``inf``/``nan`` numbers) become None. Raises ValueError for a row with
    the wrong number of fields or a bad bus id.
    """
    gpus = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(fields):
            raise ValueError("nvidia-smi query, line %d: %d fields, expected %d: %r"
                             % (lineno, len(cells), len(fields), line))
        row = dict(zip(fields, cells))
        mig = _value(row["mig.mode.current"])
        gpus.append({
            "pci_bus_id": normalize_bus_id(row["pci.bus_id"]),
            "name": _value(row["name"]),
            "uuid": _value(row["uuid"]),
            "memory_total_mib": _number(row["memory.total"]),
            "driver_version": _version(row.get("driver_version", row.get("kmd_version", ""))),
            "compute_capability": _value(row.get("compute_cap", "")),
            "persistence_mode": _enabled(row["persistence_mode"]),
            "mig_mode": {"current": _enabled(mig), "pending": None} if mig is not None else None,
            "power_limit_w": _number(row["power.limit"]),
            "ecc_mode": (
                {"current": _enabled(row["ecc.mode.current"]), "pending": None}
                if _value(row["ecc.mode.current"]) is not None else None
            ),
        })
    return gpus


def mhz(text):
    """A clock cell of nvidia-smi (``3105`` or ``3105 MHz``) as whole MHz; None for ``[N/A]``, any
    bracketed text, 0 or anything else."""
    value = _value(text or "")
    match = _MHZ.fullmatch(value) if value is not None else None
    number = int(match.group(1)) if match else 0
    return number or None


def parse_max_clocks(text):
    """Rows of the MAX_CLOCK_FIELDS query -> {bus id: {graphics_mhz, memory_mhz}}. A row that is
    not three cells with a bus id is left out (its GPU's maxima stay unknown)."""
    found = {}
    for line in (text or "").splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(MAX_CLOCK_FIELDS):
            continue
        try:
            bus = normalize_bus_id(cells[0])
        except ValueError:
            continue
        found[bus] = {"graphics_mhz": mhz(cells[1]), "memory_mhz": mhz(cells[2])}
    return found


def _max_clocks(binary, run, rows):
    """Each row's ``max_clocks`` from its own query; unknown (None) where the query fails."""
    rc, out, dummy = run(query_args(binary, MAX_CLOCK_FIELDS))
    found = parse_max_clocks(out) if rc == 0 else {}
    for row in rows:
        row["max_clocks"] = found.get(row["pci_bus_id"]) or {"graphics_mhz": None, "memory_mhz": None}


def parse_cuda_version(banner):
    """``CUDA Version: 12.4`` (``CUDA UMD Version: 13.3`` from R610) of the plain ``nvidia-smi``
    output, or None."""
    match = _CUDA_RE.search(banner or "")
    return match.group(1) if match else None


def _refused_field(rc, out, err, fields):
    """The field of ``fields`` that a failed query names (``Field "compute_cap" is not a valid
    field to query.``), when it is one that has a fallback; else None."""
    if rc == 0:
        return None
    text = "%s\n%s" % (out, err)
    for field, dummy in FIELD_FALLBACKS:
        if field in fields and re.search(r"\b%s\b" % re.escape(field), text):
            return field
    return None


def _without(fields, field):
    replacement = dict(FIELD_FALLBACKS)[field]
    return tuple(replacement if f == field else f for f in fields if replacement or f != field)


def _kmd_versions(binary, run, rows):
    """Fill each row's ``driver_version`` from ``kmd_version`` (R610 and newer); quiet on failure."""
    fields = ("pci.bus_id", "kmd_version")
    rc, out, dummy = run(query_args(binary, fields))
    if rc != 0:
        return
    by_bus = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) == 2:
            try:
                by_bus[normalize_bus_id(cells[0])] = _version(cells[1])
            except ValueError:
                continue
    for row in rows:
        row["driver_version"] = by_bus.get(row["pci_bus_id"])


def collect(binary, run):
    """Ask nvidia-smi; ``run(args) -> (rc, stdout, stderr)``.

    Returns ``answered``, ``reason``, ``driver_version``, ``cuda_version``,
    ``gpus`` ({bus id: detail}, ``nvidia_smi_index`` = nvidia-smi's GPU index),
    ``topo`` (parse_nvidia_topo result or None) and ``errors``.
    """
    result = {"answered": False, "reason": None, "driver_version": None, "cuda_version": None,
              "gpus": {}, "topo": None, "index_to_bus": {}, "errors": []}
    fields = QUERY_FIELDS
    rc, out, err = run(query_args(binary, fields))
    refused = _refused_field(rc, out, err, fields)
    while refused:
        fields = _without(fields, refused)
        rc, out, err = run(query_args(binary, fields))
        refused = _refused_field(rc, out, err, fields)
    if rc != 0:
        message = (err or out or "").strip().splitlines()
        result["reason"] = "nvidia-smi failed (rc=%s): %s" % (rc, message[0] if message else "no output")
        return result
    try:
        rows = parse_query(out, fields)
    except ValueError as exc:
        result["reason"] = "nvidia-smi output not understood: %s" % exc
        return result
    result["answered"] = True
    if "driver_version" in fields and rows and not any(row["driver_version"] for row in rows):
        # the deprecated field answered without a version: ask for its successor
        _kmd_versions(binary, run, rows)
    _max_clocks(binary, run, rows)
    for index, row in enumerate(rows):
        row["nvidia_smi_index"] = index
        result["gpus"][row["pci_bus_id"]] = row
        if row.get("driver_version") and not result["driver_version"]:
            result["driver_version"] = row["driver_version"]

    rc, out, err = run([binary])
    if rc == 0:
        result["cuda_version"] = parse_cuda_version(out)
    else:
        result["errors"].append({"source": "nvidia-smi", "error": "nvidia-smi banner failed (rc=%s): %s"
                                 % (rc, (err or out or "").strip()[:200])})

    rc, out, err = run([binary, "topo", "-m"])
    if rc != 0:
        result["errors"].append({"source": "nvidia-smi", "error": "nvidia-smi topo -m failed (rc=%s): %s"
                                 % (rc, (err or out or "").strip()[:200])})
    else:
        try:
            result["topo"] = parse_nvidia_topo(out)
        except TopoParseError as exc:
            result["errors"].append({"source": "nvidia-smi", "error": str(exc)})
    # nvidia-smi numbers GPUs in its own (PCI) order: GPU<n> is the n-th query row
    result["index_to_bus"] = dict(("GPU%d" % row["nvidia_smi_index"], row["pci_bus_id"]) for row in rows)
    return result
