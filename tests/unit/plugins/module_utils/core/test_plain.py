"""module_utils/core/plain.py: plain values from what Jinja hands a filter."""
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain


class _Recording(dict):
    """A dict that records which keys were read (ansible-core 2.20+ warns on reading skipped_reason)."""

    def __init__(self, data):
        super(_Recording, self).__init__(data)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super(_Recording, self).__getitem__(key)


def test_a_skipped_result_is_copied_without_reading_the_deprecated_skipped_reason():
    # a loop over no items, as ansible-core 2.21.5 registers it
    result = _Recording({"changed": False, "skipped": True, "skip_reason": "No items in the list",
                         "skipped_reason": "No items in the list", "results": []})
    assert plain(result) == {"changed": False, "skipped": True, "skip_reason": "No items in the list", "results": []}
    assert "skipped_reason" not in result.read


def test_skipped_reason_alone_is_kept_and_values_are_plain():
    assert plain({"skipped_reason": "x", "n": (1, 2.0, None, True)}) == {"skipped_reason": "x", "n": [1, 2.0, None, True]}
