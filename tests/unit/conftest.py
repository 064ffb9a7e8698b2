"""Make the checkout importable as ``ansible_collections.gpuops.dlserver``.

The repository root *is* the collection. Tests import plugins by their collection
path, the way Ansible loads them, so a link
``.cache/collections/ansible_collections/gpuops/dlserver -> <repo root>`` is made
(the Makefile makes the same link for ansible itself) and its parent put on sys.path.
"""
import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COLLECTIONS_ROOT = os.path.join(REPO_ROOT, ".cache", "collections")
LINK = os.path.join(COLLECTIONS_ROOT, "ansible_collections", "gpuops", "dlserver")

if not os.path.islink(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(REPO_ROOT, LINK)

if COLLECTIONS_ROOT not in sys.path:
    sys.path.insert(0, COLLECTIONS_ROOT)

# ``ansible_collections`` may already be imported (the ansible package ships one);
# make sure our root is part of its namespace path.
if "ansible_collections" in sys.modules:
    ns = sys.modules["ansible_collections"]
    path = os.path.join(COLLECTIONS_ROOT, "ansible_collections")
    if hasattr(ns, "__path__") and path not in list(ns.__path__):
        ns.__path__.append(path)
