# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's PCI ID database (``pci.ids``): the NVIDIA (``10de``) section, read once per file on
first use, and the ``chip [name]`` text of its device lines. hardware/gpu_models.py names GPUs from
it first, from its own KNOWN_GPUS table second."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

DEFAULT_PCI_IDS_PATHS = (
    "/usr/share/misc/pci.ids",
    "/usr/share/hwdata/pci.ids",
    "/usr/share/pci.ids",
)


def split_pci_ids_name(text):
    """``"GH100 [H100 SXM5 80GB]"`` -> ``("GH100", "H100 SXM5 80GB")``.

    Tolerates a missing space before the bracket (``GH100[H100 SXM5 80GB]``, as
    in pci.ids of 2023). Without brackets the whole text is both chip and name.
    """
    text = text.strip()
    start = text.find("[")
    if start > 0 and text.endswith("]"):
        return text[:start].strip(), text[start + 1:-1].strip()
    return text, text


_VENDOR_LINE_RE = re.compile(rb"\n[0-9a-fA-F]{4} ")


class PciIds(object):
    """The NVIDIA (10de) section of a pci.ids file.

    The file is read on the first lookup; only the 10de section is searched, and
    only for the ids asked for (a host has a handful of distinct ids).
    """

    def __init__(self, path):
        self.path = path
        self._section = None
        self._found = {}

    def _load(self):
        self._section = b""
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except (IOError, OSError):
            return
        if data.startswith(b"10de "):
            vendor_line = 0
        else:
            vendor_line = data.find(b"\n10de ") + 1
            if vendor_line == 0:
                return
        start = data.find(b"\n", vendor_line)
        if start < 0:
            return
        end = _VENDOR_LINE_RE.search(data, start)
        self._section = data[start:end.start() + 1 if end else len(data)]

    def lookup(self, device_id):
        """``(chip, name)`` for an NVIDIA device id (int), or None."""
        if device_id in self._found:
            return self._found[device_id]
        if self._section is None:
            self._load()
        found = None
        if isinstance(device_id, int) and 0 <= device_id <= 0xFFFF:
            for key in (b"\n\t%04x " % device_id, b"\n\t%04X " % device_id):
                pos = self._section.find(key)
                if pos >= 0:
                    eol = self._section.find(b"\n", pos + 1)
                    line = self._section[pos + len(key):eol if eol >= 0 else None]
                    found = split_pci_ids_name(line.decode("utf-8", "replace"))
                    break
        self._found[device_id] = found
        return found

    def device_ids(self):
        """Every NVIDIA device id in the section (reads the whole section)."""
        if self._section is None:
            self._load()
        return [int(m.group(1), 16) for m in re.finditer(rb"\n\t([0-9a-fA-F]{4}) ", self._section)]


_PCI_IDS_CACHE = {}


def find_pci_ids(path=None, candidates=DEFAULT_PCI_IDS_PATHS):
    """A PciIds for ``path`` (or the first candidate that exists), or None."""
    paths = [path] if path else list(candidates)
    for candidate in paths:
        if candidate and os.path.isfile(candidate):
            cached = _PCI_IDS_CACHE.get(candidate)
            if cached is None:
                cached = _PCI_IDS_CACHE[candidate] = PciIds(candidate)
            return cached
    return None
