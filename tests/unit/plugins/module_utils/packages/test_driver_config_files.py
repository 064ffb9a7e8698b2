# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver's configuration files (nouveau blacklist, modules loaded at boot, DKMS signing) as
data the module marks ``current``: the role writes only what the host lacks. The blacklist is
byte for byte what the role's copy task wrote before it moved here, so an upgraded collection
does not rewrite it (and regenerate the initramfs) on a converged host."""
import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import mark_current
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_module, driver_resolve

HEADER = "# Managed by Ansible (gpuops.dlserver.nvidia_driver): local changes are overwritten."
PLAT = {'backend': 'apt', 'branch': '535', 'header': HEADER, 'components': ['main'],
        'keyring_path': '/etc/apt/keyrings/x.asc', 'blacklist_file': '/etc/modprobe.d/gpuops-nvidia-blacklist-nouveau.conf',
        'modules_load_file': '/etc/modules-load.d/gpuops-nvidia.conf',
        'dkms_mok_file': '/etc/dkms/framework.conf.d/gpuops-nvidia-mok.conf'}
PK = {'persistenced': [], 'fm_from_cuda': False, 'cuda_needed': False, 'fabric_manager': [], 'nvlsm': [],
      'modules_load': ['nvidia', 'nvidia_uvm']}
RESULT = {'pinned': {}, 'target': '535.216.01', 'problems': []}


def render(keys=None):
    files, _dummy = driver_resolve.render_files(PLAT, PK, RESULT, keys or {}, None, '', None, 'the host', 'proprietary')
    return driver_resolve.config_files(PLAT, files)


def test_every_file_by_key_with_its_path():
    config = render()
    assert sorted(config) == ['dkms_signing', 'modules_load', 'nouveau_blacklist']
    assert config['nouveau_blacklist']['dest'] == PLAT['blacklist_file']
    assert config['modules_load'] == {'dest': PLAT['modules_load_file'], 'content': HEADER + '\nnvidia\nnvidia_uvm\n'}
    assert config['dkms_signing'] == {'dest': PLAT['dkms_mok_file'], 'content': ''}   # no key pair: removed


def test_the_blacklist_is_what_the_role_wrote_before():
    # roles/nvidia_driver/tasks/configure.yml of 0.1.0: content: |
    #   {{ __nvidia_driver_header }}
    #   # gpuops.dlserver.nvidia_driver: the NVIDIA driver owns the GPUs; nouveau must not bind them.
    #   blacklist nouveau
    #   options nouveau modeset=0
    assert render()['nouveau_blacklist']['content'] == (
        HEADER + '\n# gpuops.dlserver.nvidia_driver: the NVIDIA driver owns the GPUs; nouveau must not bind them.\n'
        'blacklist nouveau\noptions nouveau modeset=0\n')


def test_marked_current_only_where_the_host_has_the_file_so(tmp_path):
    plat = dict(PLAT, blacklist_file=str(tmp_path / 'b.conf'), modules_load_file=str(tmp_path / 'm.conf'),
                dkms_mok_file=str(tmp_path / 'dkms.conf'))
    files, _dummy = driver_resolve.render_files(plat, PK, RESULT, {}, None, '', None, 'the host', 'proprietary')
    config = driver_resolve.config_files(plat, files)
    (tmp_path / 'b.conf').write_text(config['nouveau_blacklist']['content'])
    os.chmod(str(tmp_path / 'b.conf'), 0o644)
    (tmp_path / 'm.conf').write_text(HEADER + '\nnvidia\n')                       # an older module list
    os.chmod(str(tmp_path / 'm.conf'), 0o644)
    marked = dict((key, mark_current([entry], 0o644, os.getuid(), os.getgid())[0]) for key, entry in config.items())
    assert {k: v['current'] for k, v in marked.items()} == {
        'nouveau_blacklist': True, 'modules_load': False, 'dkms_signing': True}   # no dkms file: removed already


class _Module(object):
    def __init__(self, check_mode):
        self.check_mode = check_mode

    def atomic_move(self, src, dest):
        os.rename(src, dest)


def test_write_config_renders_what_the_resolve_renders_and_writes_it(tmp_path, monkeypatch):
    import pytest
    if os.geteuid() != 0:
        pytest.skip("the files are written root-owned")
    plat = dict(PLAT, blacklist_file=str(tmp_path / "blacklist.conf"), modules_load_file=str(tmp_path / "modules.conf"),
                dkms_mok_file=str(tmp_path / "mok.conf"))
    (tmp_path / "mok.conf").write_text("left over\n")
    monkeypatch.setattr(driver_resolve, "choose_packages", lambda inp, platform, plan: ({}, PK))
    params = {'inputs': {}, 'platform': plat, 'plan': {'driver': {'branch': {'value': '535'}}},
              'files': ['nouveau_blacklist', 'modules_load', 'dkms_signing']}
    files, _dummy = driver_resolve.render_files(plat, PK, RESULT, {}, None, '', None, 'the host', 'proprietary')
    wanted = driver_resolve.config_files(plat, files)
    checked = driver_module.write_config(params, _Module(True))
    assert checked['changed'] and [d['after'] for d in checked['diff']] == [wanted[k]['content'] for k in params['files']]
    assert not (tmp_path / "blacklist.conf").exists() and (tmp_path / "mok.conf").exists(), "check mode wrote"
    written = driver_module.write_config(params, _Module(False))
    assert [w['key'] for w in written['written'] if w['changed']] == params['files']
    assert (tmp_path / "modules.conf").read_text() == wanted['modules_load']['content']
    assert not (tmp_path / "mok.conf").exists()
    assert all(entry['current'] for entry in mark_current(list(wanted.values())))
    assert driver_module.write_config(params, _Module(False))['changed'] is False


def test_write_repo_writes_the_files_of_the_resolve_and_removes_those_not_needed(tmp_path, monkeypatch):
    import pytest
    if os.geteuid() != 0:
        pytest.skip("the files are written root-owned")
    (tmp_path / "legacy.list").write_text("deb old\n")
    files = [{'dest': str(tmp_path / "cuda.sources"), 'content': 'Types: deb\n'},
             {'dest': str(tmp_path / "legacy.list"), 'content': ''}]
    monkeypatch.setattr(driver_resolve, "resolve", lambda p, host: {'problems': [], 'repo_files': files})
    checked = driver_module.write_repo({}, _Module(True), None)
    assert checked['changed'] and (tmp_path / "legacy.list").exists() and not (tmp_path / "cuda.sources").exists()
    written = driver_module.write_repo({}, _Module(False), None)
    assert [w['changed'] for w in written['written']] == [True, True]
    assert (tmp_path / "cuda.sources").read_text() == 'Types: deb\n' and not (tmp_path / "legacy.list").exists()
    assert driver_module.write_repo({}, _Module(False), None)['changed'] is False
    monkeypatch.setattr(driver_resolve, "resolve", lambda p, host: {'problems': ['bad'], 'repo_files': files})
    assert driver_module.write_repo({}, _Module(False), None) == {'problems': ['bad']}
