"""The one quoting of values written into systemd units (module_utils/core/systemd.py)."""
import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import systemd
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm, node_exporter


@pytest.mark.parametrize("arg,quoted", [
    ("--a=b", "--a=b"), ("-a", "-a"), (":9400", ":9400"), ("[::1]:9400", "[::1]:9400"), ("x y", '"x y"'),
    ('a"b', '"a\\"b"'), ('say "x"', '"say \\"x\\""'), ("100%", "100%%"), ("$HOME", "$$HOME"), ("a\\b", '"a\\\\b"'),
    ("", '""'), ("a;b", '"a;b"'), ("it's", '"it\'s"')])
def test_quote_arg(arg, quoted):
    assert systemd.quote_arg(arg) == quoted


@pytest.mark.parametrize("arg", ["a\nb", ":9400\n", "a\rb", "a\tb", "a\x00b", "a\x1bb", "a\x7fb", "a\u2028b",
                                 "a\u0085b"])
def test_quote_arg_refuses_control_characters(arg):
    """Issue 19: a newline ended the ExecStart= line and started a directive of the caller's choosing."""
    with pytest.raises(ValueError):
        systemd.quote_arg(arg)


def test_both_roles_use_the_one_helper():
    for module in (dcgm, node_exporter):
        with pytest.raises(ValueError):
            module.systemd_quote("x\nUser=root")


@pytest.mark.parametrize("value,bad", [
    ("ok", False), (["a", "b"], False), ({"k": "v"}, False), (5, False), (None, False),
    ("a\nb", True), (["a", "b\n"], True), ({"k\n": "v"}, True), ({"k": ["v\r"]}, True)])
def test_control_error(value, bad):
    error = systemd.control_error(value, "some_variable")
    assert bool(error) is bad
    if bad:
        assert error.startswith("some_variable: ")


@pytest.mark.parametrize("value,ok", [
    ("/opt/node_exporter", True), ("/var/lib/node_exporter/textfile", True), ("/etc/node_exporter", True),
    ("/", False), ("/etc", False), ("/usr/local", False), ("/var/lib", False), ("/opt", False), ("etc/x", False),
    ("/opt/../etc", False), ("/opt/./x", False), ("/opt/x/", False), ("/opt//x", False), ("/opt/x\n", False),
    ("/opt/a b", False), ("/opt/x'y", False), ("", False), ("/proc/x", False), ("/sys/fs/x", False), (5, False),
    ("/opt/ümlaut", False)])
def test_owned_dir_error(value, ok):
    error = systemd.owned_path_error(value, "node_exporter_config_dir")
    assert (error is None) is ok, error
    if error:
        assert error.startswith("node_exporter_config_dir: ")
