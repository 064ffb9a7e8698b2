# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each row of gpu_models.KNOWN_GPUS comes from: its ``source`` and the date it was ``read``
(and ``unconfirmed`` where a property could not be confirmed), as plain data that
tools/vendor_facts.py lists in docs/vendor-facts.md.

Pure data and functions, standard library only, Python 3.8+ (imported by gpu_models on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# On 2026-12-07 every id, chip and name of KNOWN_GPUS was looked up in the PCI ID database
# (pciutils/pciids, pci.ids at commit c1c1254, snapshot of 2026-08-22): every id is there with the
# same chip; the names in _README_NAMES differ there and are the README's (tests/fixtures/hosts/
# nvidia-readme-gpus.excerpt, 610.43.03; read again at tag 595.45.04 on 2026-12-07). mig_capable:
# True rows checked against the MIG user guide (its Supported GPUs table, 610; B300/GB300 in the
# 620 guide's minimum drivers). segment, memory_gb, proprietary, imex and nvswitch_baseboard are
# docs/hardware-gating.md's, not re-read.
MODELS_READ = "2026-12-07"
PCI_IDS_SOURCE = "PCI ID database (https://github.com/pciutils/pciids pci.ids, commit c1c1254 of 2026-08-22)"
_README_NAMES = {  # id -> the name pci.ids gives (the table keeps the README's product name)
    0x20F6: "A800 40GB PCIe", 0x2339: "H100 SXM5 94GB", 0x233A: "H800L 94GB", 0x2941: "HGX GB200",
    0x2BB3: "RTX PRO 5000 Blackwell / RTX PRO 5000 72GB Blackwell",
}
MIG_GUIDE = "MIG user guide, Supported GPUs (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/610/supported-gpus.html)"
MIG_GUIDE_620 = ("MIG user guide 620, Deployment Considerations (https://docs.nvidia.com/datacenter/tesla/"
                 "mig-user-guide/620/deployment-considerations.html)")
# id -> (product the MIG guide names, or None where it names none for this id)
_MIG_EVIDENCE = {
    0x20B0: "A100-SXM4 40GB", 0x20B1: "A100-PCIE 40GB", 0x20B2: "A100-SXM4 80GB", 0x20B5: "A100-PCIE 80GB",
    0x20F1: "A100-PCIE 40GB", 0x20B7: "A30", 0x20F3: None, 0x20F5: None,
    0x2330: "H100-SXM5 80GB", 0x2331: "H100-PCIE 80GB", 0x2339: "H100-SXM5 94GB", 0x2321: "H100-PCIE 94GB",
    0x2322: None, 0x2324: None, 0x233A: None, 0x2335: "H200-SXM5", 0x233B: "H200 NVL", 0x2329: "H20",
    0x232C: None, 0x230E: None, 0x2342: "H100 on GH200", 0x2348: None,
    0x2901: "B200", 0x2909: None, 0x2941: "GB200", 0x3182: "B300 (620)", 0x31C2: "GB300 (DGX Station) (620)",
    0x31C3: "GB300 (DGX Station) (620)", 0x2BB1: "RTX PRO 6000 Blackwell Workstation Edition",
    0x2BB4: "RTX PRO 6000 Blackwell Max-Q Workstation Edition", 0x2BB5: "RTX PRO 6000 Blackwell Server Edition",
    0x2BB3: "RTX PRO 5000 Blackwell", 0x2C31: "RTX PRO 4500 Blackwell",
}


def _text(device_id, row):
    pci_name = _README_NAMES.get(device_id, row["name"])
    text = '%s: "%04x  %s [%s]"' % (PCI_IDS_SOURCE, device_id, row["chip"], pci_name)
    if device_id in _README_NAMES:
        text += ('; name as NVIDIA\'s open-gpu-kernel-modules README "Compatible GPUs" prints it (tag 595.45.04, '
                 'https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md): "NVIDIA %s"' % row["name"])
    if row["mig_capable"]:
        named = _MIG_EVIDENCE.get(device_id)
        if named and named.endswith("(620)"):
            text += "; MIG: %s names %s" % (MIG_GUIDE_620, named[:-6])
        elif named:
            text += "; MIG: %s lists %s" % (MIG_GUIDE, named)
    return text


def model_source(device_id, row):
    """``{source, read[, unconfirmed]}`` of the KNOWN_GPUS row of ``device_id`` (``row``: its chip, name, mig_capable)."""
    out = {"source": _text(device_id, row), "read": MODELS_READ}
    if row["mig_capable"] and not _MIG_EVIDENCE.get(device_id):
        out["unconfirmed"] = ("mig_capable: the MIG guide's Supported GPUs names no such product (MIG by its chip, %s)"
                              % row["chip"])
    return out
