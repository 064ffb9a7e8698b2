# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generate roles/<role>/README.md for every role of the collection, from one source each.

Galaxy shows a role's README.md and refuses a collection whose roles have none. The prose of a
public role lives in docs/roles/<role>.md and its variables in roles/<role>/meta/argument_specs.yml;
the README is built from both, so it cannot say something else than they do:

    <title from the argument spec's short_description>
    <docs/roles/<role>.md without its first heading, relative links rewritten for roles/<role>/>
    ## Role variables   (every option of every public entry point: type, default, choices, text)

The private helper role (``common``) has no page in docs/roles/: its README says that it is the
collection's private plumbing and lists the task files other roles include, from its spec.

    python3 tools/role_readme.py            write every README
    python3 tools/role_readme.py --check    exit 1 and name every README that differs (CI)

tests/unit/test_role_readmes.py runs the check, so a README that drifts fails the unit tests.
"""

from __future__ import print_function

import argparse
import os
import posixpath
import re
import sys

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
COLLECTION = 'gpuops.dlserver'
# Roles that other roles include and users never call; their README says so.
PRIVATE_ROLES = ('common',)

_MARKUP = [
    (re.compile(r'L\(([^)]+?),\s*([^)]+?)\)'), lambda m: '[%s](%s)' % (m.group(1), m.group(2))),
    (re.compile(r'U\(([^)]+?)\)'), lambda m: '<%s>' % m.group(1)),
    (re.compile(r'I\(([^)]+?)\)'), lambda m: '*%s*' % m.group(1)),
    (re.compile(r'B\(([^)]+?)\)'), lambda m: '**%s**' % m.group(1)),
    (re.compile(r'HORIZONTALLINE'), lambda m: '<br>'),
    (re.compile(r'\b(?:C|V|O|RV|E|P|M)\(([^()]*(?:\([^()]*\)[^()]*)*)\)'), lambda m: '`%s`' % m.group(1)),
]
_LINK = re.compile(r'(\]\()([^)#\s]+)((?:#[^)\s]*)?\))')


class RoleReadmeError(Exception):
    """A role whose README cannot be built (missing docs, unreadable spec)."""


def markup(text):
    """Ansible doc markup (C(), O(), V(), M(), I(), B(), U(), L()) as Markdown."""
    text = str(text)
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    return text


def _paragraphs(description):
    if description is None:
        return []
    if isinstance(description, (list, tuple)):
        return [markup(d).strip() for d in description]
    return [markup(description).strip()]


def _cell(text):
    return text.replace('|', '\\|').replace('\n', ' ')


def _value(value):
    if isinstance(value, str):
        return '`%s`' % value if value != '' else '`""`'
    dumped = yaml.safe_dump(value, default_flow_style=True, width=10 ** 6).strip()
    if dumped.endswith('\n...'):
        dumped = dumped[:-4]
    return '`%s`' % dumped.replace('...', '').strip()


def _type(spec):
    kind = spec.get('type', 'str')
    if kind == 'list' and spec.get('elements'):
        return 'list of %s' % spec['elements']
    return kind


def _option_rows(options, prefix=''):
    rows = []
    for name in sorted(options or {}):
        spec = options[name] or {}
        text = ' '.join(_paragraphs(spec.get('description')))
        if spec.get('choices'):
            text += ' Choices: %s.' % ', '.join(_value(c) for c in spec['choices'])
        if spec.get('required'):
            default = 'required'
        elif 'default' in spec:
            default = _value(spec['default'])
        else:
            default = ''
        rows.append('| `%s%s` | %s | %s | %s |' % (prefix, name, _type(spec), _cell(default), _cell(text.strip())))
        if spec.get('options'):
            rows.extend(_option_rows(spec['options'], prefix='%s%s.' % (prefix, name)))
    return rows


def _options_table(options):
    if not options:
        return ['This entry point takes no options.']
    return ['| Variable | Type | Default | Description |', '| --- | --- | --- | --- |'] + _option_rows(options)


def _rewrite_links(body, source_dir, target_dir):
    """Relative links of a page in source_dir, rewritten to work from target_dir (repo-relative)."""
    def repl(match):
        target = match.group(2)
        if re.match(r'^[a-z][a-z0-9+.-]*:', target) or target.startswith('/'):
            return match.group(0)
        resolved = posixpath.normpath(posixpath.join(source_dir, target))
        return match.group(1) + posixpath.relpath(resolved, target_dir) + match.group(3)
    return _LINK.sub(repl, body)


def _load_specs(role_dir):
    path = os.path.join(role_dir, 'meta', 'argument_specs.yml')
    try:
        with open(path) as handle:
            data = yaml.safe_load(handle) or {}
    except (IOError, OSError) as exc:
        raise RoleReadmeError('%s: a role needs meta/argument_specs.yml (%s)' % (role_dir, exc))
    specs = data.get('argument_specs') or {}
    if 'main' not in specs:
        raise RoleReadmeError('%s: meta/argument_specs.yml has no main entry point' % path)
    return specs


def _entry_point_section(name, spec, level='###'):
    lines = ['%s `%s`' % (level, name), '']
    if spec.get('short_description'):
        lines += [markup(spec['short_description']).strip(), '']
    for para in _paragraphs(spec.get('description')):
        lines += [para, '']
    lines += _options_table(spec.get('options')) + ['']
    return lines


def _generated_note(sources):
    return ('<!-- Generated by tools/role_readme.py from %s; do not edit here: edit those, then run '
            '`make role-readmes`. -->' % ' and '.join(sources))


def render_public(role, repo=REPO):
    role_dir = os.path.join(repo, 'roles', role)
    specs = _load_specs(role_dir)
    doc_rel = 'docs/roles/%s.md' % role
    doc_path = os.path.join(repo, doc_rel)
    if not os.path.exists(doc_path):
        raise RoleReadmeError('role %s has no %s: write the role\'s page there (the README is built from it)'
                              % (role, doc_rel))
    with open(doc_path) as handle:
        body = handle.read()
    lines = body.splitlines()
    if lines and lines[0].startswith('# '):
        lines = lines[1:]
    body = _rewrite_links('\n'.join(lines).strip('\n'), 'docs/roles', 'roles/%s' % role)

    main = specs['main']
    out = [_generated_note([doc_rel, 'roles/%s/meta/argument_specs.yml' % role]),
           '# %s.%s' % (COLLECTION, role), '']
    if main.get('short_description'):
        out += ['%s' % markup(main['short_description']).strip(), '']
    out += [body, '', '## Role variables', '',
            'From `meta/argument_specs.yml`: Ansible validates them when the role starts, and the '
            'role converts them once (a string `"false"` from `-e` is false).', '']
    for para in _paragraphs(main.get('description')):
        out += [para, '']
    out += _options_table(main.get('options')) + ['']
    for name in sorted(n for n in specs if n != 'main'):
        out += _entry_point_section(name, specs[name])
    return '\n'.join(out).rstrip('\n') + '\n'


def render_private(role, repo=REPO):
    role_dir = os.path.join(repo, 'roles', role)
    specs = _load_specs(role_dir)
    out = [_generated_note(['roles/%s/meta/argument_specs.yml' % role]),
           '# %s.%s (private)' % (COLLECTION, role), '',
           'The collection\'s private plumbing: the task files and the handler that every role of '
           '`%s` shares. **Not for direct use**: it is not a public interface, its variables are '
           'private (`__%s_*`), and it may change in any release. Calling the role itself '
           '(`roles: [%s.%s]`) fails on purpose.' % (COLLECTION, role, COLLECTION, role), '',
           'Roles of the collection include its task files with `ansible.builtin.include_role` and '
           '`tasks_from`; how they fit together is in `docs/role-pattern.md` of the collection.', '',
           '## Entry points', '']
    out += _entry_point_section('main', specs['main'])
    for name in sorted(n for n in specs if n != 'main'):
        out += _entry_point_section(name, specs[name])
    return '\n'.join(out).rstrip('\n') + '\n'


def roles(repo=REPO):
    base = os.path.join(repo, 'roles')
    return sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))


def render(role, repo=REPO):
    return render_private(role, repo) if role in PRIVATE_ROLES else render_public(role, repo)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--check', action='store_true', help='exit 1 when a README differs; write nothing')
    parser.add_argument('--repo', default=REPO)
    args = parser.parse_args(argv)
    problems = []
    for role in roles(args.repo):
        path = os.path.join(args.repo, 'roles', role, 'README.md')
        try:
            text = render(role, args.repo)
        except RoleReadmeError as exc:
            problems.append(str(exc))
            continue
        current = None
        if os.path.exists(path):
            with open(path) as handle:
                current = handle.read()
        if current == text:
            continue
        if args.check:
            problems.append('roles/%s/README.md %s: run `make role-readmes` (or python3 tools/role_readme.py)'
                            % (role, 'is missing' if current is None else 'differs from its sources'))
        else:
            with open(path, 'w') as handle:
                handle.write(text)
            print('wrote roles/%s/README.md' % role)
    for problem in problems:
        print('role_readme: %s' % problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
