"""engines/toml_lite: the TOML reader of hosts without tomllib, equal to tomllib where both run."""
import glob
import math
import os
import tomllib

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_engines as ce
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import toml_lite
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines.toml_lite import Reader, TomlError

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "toml")
REAL_FILES = sorted(glob.glob(os.path.join(DATA, "*.toml")))


def fallback(text):
    return Reader(text).document()


def test_every_real_file_names_its_source():
    assert len(REAL_FILES) >= 3
    for path in REAL_FILES:
        with open(path) as fh:
            assert fh.readline().startswith("# SOURCE: "), path


@pytest.mark.parametrize("path", REAL_FILES, ids=os.path.basename)
def test_real_config_files_read_as_tomllib_reads_them(path):
    with open(path) as fh:
        text = fh.read()
    assert fallback(text) == tomllib.loads(text)


def test_what_the_real_files_hold():
    with open(os.path.join(DATA, "containerd-2.x-default-v3.toml")) as fh:
        v3 = fallback(fh.read())
    runtime = v3["plugins"]["io.containerd.cri.v1.runtime"]
    assert v3["version"] == 3 and runtime["cdi_spec_dirs"] == ["/etc/cdi", "/var/run/cdi"]
    assert runtime["containerd"]["runtimes"]["runc"]["options"]["IoGid"] == 0
    with open(os.path.join(DATA, "containerd-1.6-default-v2.toml")) as fh:
        v2 = fallback(fh.read())
    assert v2["version"] == 2 and "io.containerd.grpc.v1.cri" in v2["plugins"]
    with open(os.path.join(DATA, "nvidia-container-runtime-config-ubuntu.toml")) as fh:
        ncr = fallback(fh.read())
    assert ncr["nvidia-container-runtime"]["runtimes"] == ["docker-runc", "runc"]
    assert ncr["nvidia-container-runtime"]["modes"]["csv"]["mount-spec-path"].endswith("container.d")


SYNTAX = [
    'a = 1\nb = -2\nc = +3\nd = 1_000\ne = 0xDEAD_beef\nf = 0o755\ng = 0b1010\n',
    'f1 = 1.5\nf2 = -0.25\nf3 = 5e+22\nf4 = 1e06\nf5 = 6.626e-34\nf6 = 9_224.617_445\n',
    't = true\nf = false\n',
    's = "tab\\there \\"q\\" \\\\ \\u00e9 \\U0001F600"\nl = \'C:\\Users\\x\'\n',
    'm = """\nRoses\\\n   are red\n  two "" quotes""""\nn = \'\'\'\nraw \\n text\n\'\'\'\n',
    '"quoted key" = 1\n\'lit key\' = 2\na.b.c = 3\na."d.e" = 4\n "x" . y = 5\n',
    '[t]\nk = 1\n[t.sub]\nk = 2\n[other."io.containerd.grpc.v1.cri".x]\nk = 3\n',
    '[a.b]\nx = 1\n[a]\ny = 2\n',
    'arr = [ 1, 2, 3 ]\nnested = [[1, 2], ["a", "b"], []]\nmulti = [\n  "a",  # a comment\n  # only a comment\n  "b",\n]\n',
    'it = { a = 1, b.c = "x", "q" = [1, { d = true }] }\nempty = {}\n',
    '[[products]]\nname = "Hammer"\n[[products]]\n[[products]]\nname = "Nail"\n[products.sub]\nx = 1\n',
    '# only comments\n\n   # indented\n',
    'crlf = 1\r\n[t]\r\nk = "v"\r\n',
    'inf1 = inf\ninf2 = -inf\n',
    'k = "a" # comment after a value\n[t] # comment after a header\n',
    'emoji = "\u00e9\u4e2d"\n',
]


@pytest.mark.parametrize("text", SYNTAX)
def test_syntax_reads_as_tomllib(text):
    assert fallback(text) == tomllib.loads(text)


def test_nan():
    assert math.isnan(fallback("x = nan\n")["x"])


INVALID = [
    ('a = 1\na = 2\n', "defined twice"),
    ('[t]\n[t]\n', "defined twice"),
    ('a = 1\n[a]\n', "defined twice"),
    ('a = {b = 1}\n[a.c]\n', "already defined"),
    ('a = [1]\n[[a]]\n', "not an array of tables"),
    ('a = "open\n', "control character"),
    ('a = "open', "not closed"),
    ('a = \'open\n', "not closed"),
    ('a = """open\n', "not closed"),
    ('a = "bad \\q"\n', "unknown escape"),
    ('a = "\\uD800"\n', "not a Unicode scalar"),
    ('a = "ctl \x01"\n', "control character"),
    ('a = 1 b = 2\n', "end of the line"),
    ('a = [1 2]\n', 'expected ","'),
    ('a = {b = 1,}\n', "expected a key"),
    ('a = {b = 1\n}\n', 'expected ","'),
    ('a =\n', "expected a value"),
    ('= 1\n', "expected a key"),
    ('a = 01\n', "not a TOML value"),
    ('a = 1__0\n', "not a TOML value"),
    ('a = yes\n', "not a TOML value"),
    ('[t\n', "expected ']'"),
    ('a.b = 1\na.b.c = 2\n', "already defined"),
    ('"""k""" = 1\n', "multi-line"),
]


@pytest.mark.parametrize("text, message", INVALID)
def test_invalid_text_is_refused_with_where(text, message):
    with pytest.raises(TomlError, match=message) as err:
        fallback(text)
    assert "line" in str(err.value)
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)


@pytest.mark.parametrize("text", ['d = 1979-05-27\n', 't = 07:32:00\n', 'dt = 1979-05-27 07:32:00Z\n'])
def test_dates_are_refused_without_tomllib(text):
    """containerd and nvidia-container-runtime configs hold no dates: say so rather than guess."""
    tomllib.loads(text)
    with pytest.raises(TomlError, match="dates and times are not read"):
        fallback(text)


def test_loads_uses_tomllib_where_there_is_one_and_the_reader_elsewhere(monkeypatch):
    assert toml_lite.loads('a = 1\n') == {"a": 1}
    with pytest.raises(TomlError):
        toml_lite.loads('a = \n')
    monkeypatch.setattr(toml_lite, "tomllib", None)
    assert toml_lite.loads('a = [1, {b = "c"}]\n') == {"a": [1, {"b": "c"}]}
    with pytest.raises(TomlError, match="line 1"):
        toml_lite.loads('a = \n')


def test_container_engines_read_toml_without_tomllib(monkeypatch):
    """What the module does on Ubuntu 22.04 (3.10) and EL 9 (3.9): the user's containerd config
    is merged with the reader, and the result holds the same settings as with tomllib."""
    with open(os.path.join(DATA, "containerd-2.x-default-v3.toml")) as fh:
        text = fh.read()
    with_tomllib = ce.containerd_main(text, "/etc/containerd/config.toml", "/etc/containerd/conf.d/*.toml", 3)
    monkeypatch.setattr(toml_lite, "tomllib", None)
    without = ce.containerd_main(text, "/etc/containerd/config.toml", "/etc/containerd/conf.d/*.toml", 3)
    assert without == with_tomllib
    with pytest.raises(ce.ConfigError, match="/etc/x.toml is not valid TOML: .*line 2"):
        ce.parse_toml("version = [2\n", "/etc/x.toml")


def test_dump_toml_quotes_keys_with_a_newline():
    text = ce.dump_toml({"a\nb": 1, "ok_key": 2})
    assert tomllib.loads(text) == {"a\nb": 1, "ok_key": 2}
