# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Repository key trust shared by every role that adds a package repository.

One implementation of "the key is trusted exactly so": the key's URL is checked first
(``key_problems``: http(s) or file, a plain-http URL only when a sha256 pins the file, a
fingerprint or a checksum to check it by), the key file is downloaded once, its sha256 checked
when the user gives one, its primary keys read with ``gpg --show-keys``, and only the wanted
primary key exported (``choose_key`` decides which: a file with a second key is refused unless
a fingerprint selects one) into an armored keyring that becomes the repository's
``Signed-By``. Used by the modules gpuops.dlserver.__private.package_repository (every role's
repositories), gpuops.dlserver.__private.nvidia_driver_host (the scratch query of the CUDA repository)
and gpuops.dlserver.__private.nvidia_container_toolkit_host.

``Host`` is the edge (commands with a C locale, files, downloads); ``Failure`` carries a
message that names the variable to change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import re
import shutil
import tempfile

from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.url_trust import fingerprint_problem, sha256_problem

KEY_URL_RE = re.compile(r'(https?|file)://[^\s]+')
SHA256_RE = re.compile(r'(sha256:)?[0-9a-fA-F]{64}')
FINGERPRINT_RE = re.compile(r'[0-9A-F]{40}')


class Failure(Exception):
    def __init__(self, msg, rc=None, stderr='', stdout=''):
        super(Failure, self).__init__(msg)
        self.msg, self.rc, self.stderr, self.stdout = msg, rc, stderr, stdout

    def fail_json(self, module):
        """Fail ``module`` with this failure: its message (ending in one period), rc, stderr, stdout,
        and the message as the one problem."""
        module.fail_json(msg='%s.' % self.msg.rstrip('.'), rc=self.rc, stderr=self.stderr, stdout=self.stdout,
                         problems=[self.msg])


def fail_problems(module, result):
    """Fail ``module`` with ``result``, naming every one of its ``problems`` (joined, ending in one period)."""
    module.fail_json(msg='%s.' % '; '.join(result['problems']).rstrip('.'), **result)


class Host(object):
    """The edge: commands, files, downloads."""

    def __init__(self, module):
        self.module = module

    def run(self, args, check=True, what=None, env=None):
        environ = {'LC_ALL': 'C', 'LANG': 'C'}
        environ.update(env or {})
        rc, out, err = self.module.run_command(args, environ_update=environ)
        if check and rc != 0:
            raise Failure('%s failed (rc %s): %s' % (what or ' '.join(args[:3]), rc, (err or out).strip()[-800:]),
                          rc=rc, stderr=err, stdout=out)
        return rc, out, err

    def read(self, path):
        with open(path) as handle:
            return handle.read()

    def download(self, url, dest, variable='the key URL'):
        if url.startswith('file://'):
            try:
                shutil.copyfile(url[len('file://'):], dest)
            except (IOError, OSError) as exc:
                raise Failure('cannot read the repository key %s (%s): %s on this host'
                              % (url, variable, exc.strerror or exc))
            return
        try:
            resp = open_url(url, timeout=60)
            with open(dest, 'wb') as handle:
                shutil.copyfileobj(resp, handle)
        except Exception as exc:  # pylint: disable=broad-except
            raise Failure('cannot download the repository key %s (%s): %s' % (url, variable, exc))


def parse_fingerprints(text):
    """Primary-key fingerprints from ``gpg --with-colons`` output."""
    fprs, after_pub = [], False
    for line in text.splitlines():
        fields = line.split(':')
        if fields[0] == 'pub':
            after_pub = True
        elif fields[0] == 'fpr' and after_pub and len(fields) > 9:
            fprs.append(fields[9].upper())
            after_pub = False
    return fprs


def choose_key(url, found, wanted, variable):
    """The one key of the file at ``url`` that is trusted as the repository's Signed-By.

    With a wanted fingerprint only that key is exported (other keys in the file are dropped
    and reported); without one the file must carry exactly one key.
    """
    if wanted:
        if wanted not in found:
            return {'ok': False, 'error': 'the repository key %s has fingerprint(s) %s, expected %s (set '
                                          '%s to the key that signs the repository)'
                                          % (url, ', '.join(found) or 'none', wanted, variable)}
        dropped = [f for f in found if f != wanted]
        return {'ok': True, 'fingerprint': wanted, 'dropped': dropped,
                'reason': 'only %s is exported into the keyring%s' % (
                    wanted, ' (not trusted: %s)' % ', '.join(dropped) if dropped else '')}
    if len(found) != 1:
        return {'ok': False, 'error': 'the repository key file %s carries %d keys (%s) and no fingerprint says which '
                                      'one signs the repository: set %s'
                                      % (url, len(found), ', '.join(found) or 'none', variable)}
    return {'ok': True, 'fingerprint': found[0], 'dropped': [],
            'reason': 'the file carries one key, %s (checked by its sha256)' % found[0]}


def clean_fingerprint(value):
    """The fingerprint without blanks, upper case (``EB69 3B30 ...`` as NVIDIA prints it)."""
    return re.sub(r'\s', '', value or '').upper()


def clean_sha256(value):
    """The hex digest of ``sha256:<hex>`` or ``<hex>``, lower case ('' when unset)."""
    value = (value or '').strip().lower()
    return value[len('sha256:'):] if value.startswith('sha256:') else value


def key_problems(spec):
    """What makes the key of ``spec`` untrustworthy before anything is downloaded.

    ``spec``: url, sha256, fingerprint and url_var / checksum_var / fingerprint_var (the
    variables the messages name). A plain-http key URL is refused unless a fingerprint or a
    sha256 pins it: anyone on the path could hand over their own key. A pinned fingerprint is
    enough (issue 37): only the key with that fingerprint is exported, and no one can make a key
    with another's fingerprint; a sha256 on top is not required.
    """
    url, sha, fpr = spec.get('url') or '', spec.get('sha256') or '', clean_fingerprint(spec.get('fingerprint'))
    url_var = spec.get('url_var', 'the key URL')
    sha_var = spec.get('checksum_var', 'the key checksum')
    fpr_var = spec.get('fingerprint_var', 'the key fingerprint')
    problems = []
    if not KEY_URL_RE.fullmatch(url):
        problems.append('%s must be an https://, http:// or file:// URL, got %r' % (url_var, url))
    elif url.startswith('http://') and not (sha or fpr):
        problems.append('the repository key %s comes over plain http and nothing pins it: set %s (the full '
                        'fingerprint of the key that signs the repository) or %s to its sha256 (or use https://)'
                        % (url, fpr_var, sha_var))
    if sha and not SHA256_RE.fullmatch(sha):
        problems.append(sha256_problem(sha_var, spec.get('sha256')) or
                        '%s must be sha256:<64 hex digits> (or ""), got %r' % (sha_var, spec.get('sha256')))
    if fpr and not FINGERPRINT_RE.fullmatch(fpr):
        problems.append(fingerprint_problem(fpr_var, spec.get('fingerprint')) or
                        '%s must be a 40-hex-digit OpenPGP fingerprint (or ""), got %r' % (fpr_var, fpr))
    if not (sha or fpr) and KEY_URL_RE.fullmatch(url) and not url.startswith('http://'):
        problems.append('the repository key %s cannot be checked: set %s (the fingerprint of the key that signs the '
                        'repository) or %s (sha256 of the file)' % (url, fpr_var, sha_var))
    return problems


def _stop_agent(host, home):
    """Stop the gpg-agent that ``gpg --import`` started for the throw-away ``home``: it would outlive the run."""
    gpgconf = host.module.get_bin_path('gpgconf')
    if gpgconf:
        host.run([gpgconf, '--homedir', home, '--kill', 'gpg-agent'], check=False, env={'GNUPGHOME': home})


def fetch_key(host, spec, work):
    """Download the key once, check sha256 and fingerprint, export only the chosen key.

    ``spec``: url, sha256, fingerprint (from the role's inputs) and optionally url_var,
    checksum_var and fingerprint_var, the variables the failure messages name. Returns the path
    of the exported keyring and the record the roles report (status file).
    """
    problems = key_problems(spec)
    if problems:
        raise Failure('; '.join(problems))
    wanted_sha = clean_sha256(spec.get('sha256'))
    wanted_fpr = clean_fingerprint(spec.get('fingerprint'))
    gpg = host.module.get_bin_path('gpg')
    if not gpg:
        raise Failure('gpg is not installed, so the repository key %s cannot be checked; install gpg' % spec['url'])
    dest = os.path.join(work, 'downloaded.key')
    host.download(spec['url'], dest, spec.get('url_var', 'the key URL'))
    with open(dest, 'rb') as handle:
        actual = hashlib.sha256(handle.read()).hexdigest()
    if wanted_sha and actual != wanted_sha:
        raise Failure('the repository key %s has sha256 %s, expected %s (%s)'
                      % (spec['url'], actual, wanted_sha, spec.get('checksum_var', 'the key checksum')))
    home = tempfile.mkdtemp(prefix='gnupg.', dir=work)
    env = {'GNUPGHOME': home}
    dummy, out, dummy2 = host.run([gpg, '--batch', '--no-tty', '--with-colons', '--show-keys', dest],
                                  what='gpg --show-keys of the repository key', env=env)
    chosen = choose_key(spec['url'], parse_fingerprints(out), wanted_fpr,
                        spec.get('fingerprint_var', 'the key fingerprint'))
    if not chosen['ok']:
        raise Failure(chosen['error'])
    try:
        host.run([gpg, '--batch', '--no-tty', '--import', dest], what='gpg --import of the repository key', env=env)
        dummy, armored, dummy2 = host.run([gpg, '--batch', '--no-tty', '--armor', '--export-options', 'export-clean',
                                           '--export', chosen['fingerprint']], what='gpg --export', env=env)
    finally:
        _stop_agent(host, home)
    keyring = os.path.join(work, 'keyring.asc')
    with open(keyring, 'w') as handle:
        handle.write(armored)
    return keyring, {'url': spec['url'], 'sha256': actual, 'fingerprints': [chosen['fingerprint']],
                     'dropped': chosen['dropped'], 'reason': chosen['reason'], 'content': armored,
                     'content_sha256': hashlib.sha256(armored.encode()).hexdigest()}
