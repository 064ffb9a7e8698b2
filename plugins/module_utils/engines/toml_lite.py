# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A TOML reader for hosts whose Python has no ``tomllib`` (3.8 to 3.10).

It reads the part of TOML 1.0 that containerd's and nvidia-container-runtime's config.toml
files use: comments, ``[tables]`` and ``[[arrays of tables]]``, bare, quoted and dotted keys,
basic and literal strings (single- and multi-line), integers (decimal, hex, octal, binary,
with underscores), floats, booleans, arrays (over several lines, with comments and a
trailing comma) and inline tables. Dates and times are refused with a clear error. Where
both run, its result equals ``tomllib.loads`` (tests/unit/plugins/module_utils/engines/
test_toml_lite.py, on the real files under tests/unit/plugins/module_utils/data/toml/).

``loads`` uses ``tomllib`` when the host has it, this reader otherwise; ``TomlError`` is
raised for invalid input either way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    import tomllib  # novm: Python >= 3.11 only; the reader below serves older hosts
except ImportError:
    tomllib = None


class TomlError(ValueError):
    """Text that is not TOML (or uses what this reader does not read); names the line."""


_BARE = re.compile(r'[A-Za-z0-9_-]+')
_WS = ' \t'
_ESCAPES = {'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', '"': '"', '\\': '\\'}
_INT = re.compile(r'[+-]?(0|[1-9](_?[0-9])*)\Z')
_PREFIXED = re.compile(r'0(x[0-9A-Fa-f](_?[0-9A-Fa-f])*|o[0-7](_?[0-7])*|b[01](_?[01])*)\Z')
_FLOAT = re.compile(r'[+-]?(0|[1-9](_?[0-9])*)(\.[0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?\Z')
_SPECIAL_FLOAT = {'inf': float('inf'), '+inf': float('inf'), '-inf': float('-inf'),
                  'nan': float('nan'), '+nan': float('nan'), '-nan': float('nan')}
_VALUE_END = re.compile(r'[^\s,\]}#]+')


def loads(text):
    """The data of a TOML document (``tomllib`` where the host has it)."""
    if tomllib is not None:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise TomlError(str(exc))
    return Reader(text).document()


class Reader:
    """One pass over the text; ``pos`` is the next character to read."""

    def __init__(self, text):
        if not isinstance(text, str):
            raise TomlError('TOML text must be a string')
        self.text = text
        self.pos = 0
        self.root = {}
        self.defined = set()      # tables opened by a [header] (or an inline table / value)
        self.frozen = set()       # ids of inline tables and static arrays: never extended

    # ------------------------------------------------------------------ errors, scanning

    def error(self, msg):
        line = self.text.count('\n', 0, self.pos) + 1
        col = self.pos - (self.text.rfind('\n', 0, self.pos) + 1) + 1
        raise TomlError('%s (at line %d, column %d)' % (msg, line, col))

    def peek(self, n=1):
        return self.text[self.pos:self.pos + n]

    def skip_ws(self):
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def skip_comment(self):
        if self.peek() == '#':
            end = self.text.find('\n', self.pos)
            self.pos = len(self.text) if end < 0 else end

    def skip_blank(self):
        """Whitespace, newlines and comments (inside arrays)."""
        while True:
            self.skip_ws()
            self.skip_comment()
            if self.peek() == '\n' or self.peek(2) == '\r\n':
                self.pos += 1 if self.peek() == '\n' else 2
                continue
            return

    def end_of_line(self):
        self.skip_ws()
        self.skip_comment()
        if self.pos >= len(self.text):
            return
        if self.peek() == '\n':
            self.pos += 1
        elif self.peek(2) == '\r\n':
            self.pos += 2
        else:
            self.error('expected the end of the line, found %r' % self.peek())

    # ------------------------------------------------------------------ document

    def document(self):
        current = self.root
        while True:
            self.skip_blank()
            if self.pos >= len(self.text):
                return self.root
            if self.peek(2) == '[[':
                self.pos += 2
                current = self.array_table(self.key_path(']]'))
            elif self.peek() == '[':
                self.pos += 1
                current = self.table(self.key_path(']'))
            else:
                self.key_value(current)
            self.end_of_line()

    def key_path(self, closer):
        self.skip_ws()
        keys = self.dotted_key()
        self.skip_ws()
        if not self.text.startswith(closer, self.pos):
            self.error('expected %r after a table name' % closer)
        self.pos += len(closer)
        return keys

    def descend(self, parent, key, path):
        """The table under ``key`` of ``parent`` (made when missing; the last element of an
        array of tables)."""
        node = parent.get(key)
        if node is None:
            node = parent[key] = {}
        elif isinstance(node, list) and id(node) not in self.frozen and node and isinstance(node[-1], dict):
            node = node[-1]
        elif not isinstance(node, dict) or id(node) in self.frozen:
            self.error('%s is already defined as a value' % '.'.join(path))
        return node

    def table(self, keys):
        node = self.root
        for i, key in enumerate(keys[:-1]):
            node = self.descend(node, key, keys[:i + 1])
        last = keys[-1]
        if last in node:
            target = node[last]
            if not isinstance(target, dict) or id(target) in self.frozen or id(target) in self.defined:
                self.error('table [%s] is defined twice' % '.'.join(keys))
        else:
            target = node[last] = {}
        self.defined.add(id(target))
        return target

    def array_table(self, keys):
        node = self.root
        for i, key in enumerate(keys[:-1]):
            node = self.descend(node, key, keys[:i + 1])
        last = keys[-1]
        if last not in node:
            node[last] = []
        elif not isinstance(node[last], list) or id(node[last]) in self.frozen:
            self.error('[[%s]] names something that is not an array of tables' % '.'.join(keys))
        item = {}
        node[last].append(item)
        self.defined.add(id(item))
        return item

    def key_value(self, table):
        keys = self.dotted_key()
        self.skip_ws()
        if self.peek() != '=':
            self.error('expected "=" after the key %s' % '.'.join(keys))
        self.pos += 1
        self.skip_ws()
        value = self.value()
        node = table
        for i, key in enumerate(keys[:-1]):
            child = node.get(key)
            if child is None:
                child = node[key] = {}
            elif not isinstance(child, dict) or id(child) in self.frozen or id(child) in self.defined:
                self.error('%s is already defined' % '.'.join(keys[:i + 1]))
            node = child
        if keys[-1] in node:
            self.error('the key %s is defined twice' % '.'.join(keys))
        node[keys[-1]] = value

    # ------------------------------------------------------------------ keys

    def dotted_key(self):
        keys = [self.simple_key()]
        while True:
            self.skip_ws()
            if self.peek() != '.':
                return keys
            self.pos += 1
            self.skip_ws()
            keys.append(self.simple_key())

    def simple_key(self):
        char = self.peek()
        if char == '"':
            if self.peek(3) == '"""':
                self.error('a key cannot be a multi-line string')
            return self.basic_string()
        if char == "'":
            if self.peek(3) == "'''":
                self.error('a key cannot be a multi-line string')
            return self.literal_string()
        match = _BARE.match(self.text, self.pos)
        if not match:
            self.error('expected a key, found %r' % (char or 'the end of the text'))
        self.pos = match.end()
        return match.group(0)

    # ------------------------------------------------------------------ values

    def value(self):
        char = self.peek()
        if char == '"':
            return self.multiline_basic() if self.peek(3) == '"""' else self.basic_string()
        if char == "'":
            return self.multiline_literal() if self.peek(3) == "'''" else self.literal_string()
        if char == '[':
            return self.array()
        if char == '{':
            return self.inline_table()
        match = _VALUE_END.match(self.text, self.pos)
        if not match:
            self.error('expected a value, found %r' % (char or 'the end of the text'))
        word = match.group(0)
        if word in ('true', 'false'):
            self.pos = match.end()
            return word == 'true'
        return self.number(word, match.end())

    def number(self, word, end):
        if _INT.match(word):
            value = int(word.replace('_', ''), 10)
        elif _PREFIXED.match(word):
            value = int(word[2:].replace('_', ''), {'x': 16, 'o': 8, 'b': 2}[word[1]])
        elif word in _SPECIAL_FLOAT:
            value = _SPECIAL_FLOAT[word]
        elif _FLOAT.match(word) and ('.' in word or 'e' in word or 'E' in word):
            value = float(word.replace('_', ''))
        elif re.match(r'\d{4}-\d{2}-\d{2}|\d{2}:\d{2}', word):
            self.error('dates and times are not read on this host (Python without tomllib): %r' % word)
        else:
            self.error('not a TOML value: %r' % word)
        self.pos = end
        return value

    def array(self):
        self.pos += 1
        items = []
        while True:
            self.skip_blank()
            if self.peek() == ']':
                self.pos += 1
                break
            items.append(self.value())
            self.skip_blank()
            if self.peek() == ',':
                self.pos += 1
            elif self.peek() == ']':
                self.pos += 1
                break
            else:
                self.error('expected "," or "]" in an array')
        self.frozen.add(id(items))
        return items

    def inline_table(self):
        self.pos += 1
        table = {}
        self.skip_ws()
        if self.peek() == '}':
            self.pos += 1
            self.frozen.add(id(table))
            return table
        while True:
            self.skip_ws()
            self.key_value(table)
            self.skip_ws()
            if self.peek() == ',':
                self.pos += 1
            elif self.peek() == '}':
                self.pos += 1
                break
            else:
                self.error('expected "," or "}" in an inline table')
        self._freeze(table)
        return table

    def _freeze(self, table):
        self.frozen.add(id(table))
        for value in table.values():
            if isinstance(value, dict):
                self._freeze(value)

    # ------------------------------------------------------------------ strings

    def _escape(self):
        """The character of the escape at pos (after the backslash)."""
        char = self.peek()
        if char in _ESCAPES:
            self.pos += 1
            return _ESCAPES[char]
        if char in ('u', 'U'):
            width = 4 if char == 'u' else 8
            digits = self.text[self.pos + 1:self.pos + 1 + width]
            if len(digits) != width or not re.match(r'[0-9A-Fa-f]+\Z', digits):
                self.error('a \\%s escape needs %d hex digits' % (char, width))
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                self.error('\\%s%s is not a Unicode scalar value' % (char, digits))
            self.pos += 1 + width
            return chr(code)
        self.error('unknown escape \\%s' % char)

    def _check_char(self, char, multiline):
        code = ord(char)
        if (code < 0x20 and char != '\t' and not (multiline and char == '\n')) or code == 0x7F:
            self.error('control character %r in a string' % char)

    def basic_string(self):
        self.pos += 1
        out = []
        while True:
            if self.pos >= len(self.text):
                self.error('a string is not closed')
            char = self.text[self.pos]
            if char == '"':
                self.pos += 1
                return ''.join(out)
            if char == '\\':
                self.pos += 1
                out.append(self._escape())
                continue
            self._check_char(char, False)
            out.append(char)
            self.pos += 1

    def literal_string(self):
        self.pos += 1
        end = self.text.find("'", self.pos)
        newline = self.text.find('\n', self.pos)
        if end < 0 or 0 <= newline < end:
            self.error('a string is not closed')
        value = self.text[self.pos:end]
        for char in value:
            self._check_char(char, False)
        self.pos = end + 1
        return value

    def _multiline_start(self):
        self.pos += 3
        if self.peek() == '\n':
            self.pos += 1
        elif self.peek(2) == '\r\n':
            self.pos += 2

    def _closing_quotes(self, quote):
        """At a run of ``quote`` chars: consume the closing delimiter (up to two quotes of the
        content may precede it). Returns the content quotes, or None when it does not close."""
        run = 0
        while self.text[self.pos + run:self.pos + run + 1] == quote:
            run += 1
        if run < 3:
            return None
        if run > 5:
            self.error('too many quotes in a row')
        self.pos += run
        return quote * (run - 3)

    def multiline_basic(self):
        self._multiline_start()
        out = []
        while True:
            if self.pos >= len(self.text):
                self.error('a multi-line string is not closed')
            char = self.text[self.pos]
            if char == '"':
                tail = self._closing_quotes('"')
                if tail is not None:
                    return ''.join(out) + tail
                out.append(char)
                self.pos += 1
                continue
            if char == '\\':
                rest = re.match(r'\\[ \t]*\r?\n[\s]*', self.text[self.pos:])
                if rest:
                    self.pos += rest.end()
                    continue
                self.pos += 1
                out.append(self._escape())
                continue
            if self.peek(2) == '\r\n':
                out.append('\n')
                self.pos += 2
                continue
            self._check_char(char, True)
            out.append(char)
            self.pos += 1

    def multiline_literal(self):
        self._multiline_start()
        out = []
        while True:
            if self.pos >= len(self.text):
                self.error('a multi-line string is not closed')
            char = self.text[self.pos]
            if char == "'":
                tail = self._closing_quotes("'")
                if tail is not None:
                    return ''.join(out) + tail
            elif self.peek(2) == '\r\n':
                out.append('\n')
                self.pos += 2
                continue
            else:
                self._check_char(char, True)
            out.append(char)
            self.pos += 1
