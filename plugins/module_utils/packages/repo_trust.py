# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Repository key trust shared by every role that adds an NVIDIA repository.

One implementation of "the key is trusted exactly so": the key file is downloaded once, its
sha256 checked when the user gives one, its primary keys read with ``gpg --show-keys``, only
the wanted fingerprint exported (``nvidia_repo.choose_key`` decides which) into an armored
keyring that becomes the repository's ``Signed-By``. Used by the modules
gpuops.dlserver.nvidia_driver_repo (CUDA repository) and
gpuops.dlserver.nvidia_container_toolkit_facts (libnvidia-container repository).

``Host`` is the edge (commands with a C locale, files, downloads); ``Failure`` carries a
message that names the variable to change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import shutil
import tempfile

from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo


class Failure(Exception):
    def __init__(self, msg, rc=None, stderr='', stdout=''):
        super(Failure, self).__init__(msg)
        self.msg, self.rc, self.stderr, self.stdout = msg, rc, stderr, stdout


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

    def download(self, url, dest):
        if url.startswith('file://'):
            shutil.copyfile(url[len('file://'):], dest)
            return
        try:
            resp = open_url(url, timeout=60)
            with open(dest, 'wb') as handle:
                shutil.copyfileobj(resp, handle)
        except Exception as exc:  # pylint: disable=broad-except
            raise Failure('cannot download the repository key %s: %s' % (url, exc))


def fetch_key(host, spec, work):
    """Download the key once, check sha256 and fingerprint, export only the chosen key.

    ``spec``: url, sha256, fingerprint (from the role's inputs) and optionally checksum_var and
    fingerprint_var, the variables the failure messages name. Returns the path of the exported
    keyring and the record the roles report (status file).
    """
    gpg = host.module.get_bin_path('gpg')
    if not gpg:
        raise Failure('gpg is not installed, so the repository key %s cannot be checked; install gpg' % spec['url'])
    dest = os.path.join(work, 'downloaded.key')
    host.download(spec['url'], dest)
    with open(dest, 'rb') as handle:
        actual = hashlib.sha256(handle.read()).hexdigest()
    if spec['sha256'] and actual != spec['sha256']:
        raise Failure('the repository key %s has sha256 %s, expected %s (%s)'
                      % (spec['url'], actual, spec['sha256'],
                         spec.get('checksum_var', 'nvidia_driver_cuda_keyring_checksum')))
    home = tempfile.mkdtemp(prefix='gnupg.', dir=work)
    env = {'GNUPGHOME': home}
    dummy, out, dummy2 = host.run([gpg, '--batch', '--no-tty', '--with-colons', '--show-keys', dest],
                                  what='gpg --show-keys of the repository key', env=env)
    chosen = repo.choose_key(spec['url'], repo.parse_fingerprints(out), spec['fingerprint'],
                             spec.get('fingerprint_var', 'nvidia_driver_cuda_keyring_fingerprint'))
    if not chosen['ok']:
        raise Failure(chosen['error'])
    host.run([gpg, '--batch', '--no-tty', '--import', dest], what='gpg --import of the repository key', env=env)
    dummy, armored, dummy2 = host.run([gpg, '--batch', '--no-tty', '--armor', '--export-options', 'export-clean',
                                       '--export', chosen['fingerprint']], what='gpg --export', env=env)
    keyring = os.path.join(work, 'keyring.asc')
    with open(keyring, 'w') as handle:
        handle.write(armored)
    return keyring, {'url': spec['url'], 'sha256': actual, 'fingerprints': [chosen['fingerprint']],
                     'dropped': chosen['dropped'], 'reason': chosen['reason'], 'content': armored,
                     'content_sha256': hashlib.sha256(armored.encode()).hexdigest()}
