# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repositories tests/doubles/build_repo.py builds: one spec per repository (where it lives in
the mirror, its directories, its signing key, its packages). Every package is a TEST DOUBLE and says
so: the version carries ``+gpuops.testdouble``, the Description starts with ``TEST DOUBLE`` and the
files it ships are markers, unit files and scripts that print TEST DOUBLE and fail the way the real
tools fail without a loaded driver.

- ``cuda``: NVIDIA's CUDA repository (``apt/cuda/<distro>/<arch>/``), one repository per Debian
  release as NVIDIA lays it out: the 580 driver at two versions (the upgrade path of
  nvidia_driver's ``cuda_repo`` source), Fabric Manager at Debian's own driver versions (hosts on
  the ``distro`` source take only Fabric Manager from it), and DCGM with dcgm-exporter
  (dcgm_exporter's host mode: tests/doubles/dcgm/ holds the nv-hostengine and exporter stand-ins),
  and the CUDA toolkits 12.4 and 12.6 side by side (cuda_toolkit: ``cuda-toolkit-12-4`` and
  ``cuda-toolkit-12-6``, each with an ``nvcc`` TEST DOUBLE under /usr/local/cuda-X.Y, and cuDNN/NCCL
  development packages named as NVIDIA names them).
  Every role reaches it through the collection's one set of CUDA repository variables
  (gpuops_cuda_repo_*).
- ``ctk``: NVIDIA's libnvidia-container repository (``apt/libnvidia-container/stable/deb/amd64/``):
  the toolkit at 1.18.2 (the known-vulnerable refusal, the override and the upgrade path) and
  1.19.1; both carry the CDI refresh units of the real 1.18+ packages.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
SUFFIX = "+gpuops.testdouble"
REVISION = "1" + SUFFIX
DCGM_VERSION = "4.4.1"
EXPORTER_VERSION = "4.4.1-4.5.2"
CUDA_MAJORS = ("11", "12", "13")
CTK_VERSIONS = ["1.18.2", "1.19.1"]

# The 580 branch at two versions (the upgrade path), plus Fabric Manager at the versions of
# the driver Debian itself ships (hosts on the `distro` source take only Fabric Manager from
# the CUDA repository).
CUDA_BRANCH_VERSIONS = {"580": ["580.95.05", "580.105.08"]}
DISTRO_FABRIC_MANAGER = {
    "debian12": {"535": ["535.261.03", "535.309.01"]},
    "debian13": {"550": ["550.163.01"]},
}
NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
             "Make sure that the latest NVIDIA driver is installed and running.")


def _script(tool, message, code):
    return ("#!/bin/sh\n# TEST DOUBLE of %s (gpuops.dlserver lab); not NVIDIA software.\n"
            "cat >&2 <<'EOF'\nTEST DOUBLE of %s (gpuops.dlserver lab): %s\nEOF\nexit %d\n"
            % (tool, tool, message, code))


def _unit(what, binary):
    return ("[Unit]\nDescription=TEST DOUBLE of %s (gpuops.dlserver lab)\n\n"
            "[Service]\nType=simple\nExecStart=%s\n\n[Install]\nWantedBy=multi-user.target\n" % (what, binary))


def driver_packages(version, branch):
    """The packages of one driver version, as (name, depends, extra fields, files)."""
    ver = version + "-" + REVISION

    def marker(name):
        return {"/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s %s\n" % (name, ver)}

    smi = {"/usr/bin/nvidia-smi": (_script("nvidia-smi", NO_DRIVER, 9), 0o755)}
    smi.update(marker("nvidia-smi"))
    persistenced = {
        "/usr/bin/nvidia-persistenced": (_script("nvidia-persistenced", "no NVIDIA driver is loaded", 1), 0o755),
        "/usr/lib/systemd/system/nvidia-persistenced.service": (
            _unit("NVIDIA Persistence Daemon", "/usr/bin/nvidia-persistenced"), 0o644),
    }
    persistenced.update(marker("nvidia-persistenced"))
    return [
        ("nvidia-driver-cuda", "nvidia-smi (= {v}), libcuda1 (= {v}), nvidia-persistenced (= {v})".format(v=ver),
         {}, marker("nvidia-driver-cuda")),
        ("nvidia-smi", "libnvidia-ml1 (= %s)" % ver, {}, smi),
        ("libnvidia-ml1", "", {}, marker("libnvidia-ml1")),
        ("libcuda1", "", {}, marker("libcuda1")),
        ("nvidia-persistenced", "", {}, persistenced),
        ("nvidia-kernel-open-dkms", "", {"Conflicts": "nvidia-kernel-dkms", "Provides": "nvidia-kernel-%s" % version},
         marker("nvidia-kernel-open-dkms")),
        ("nvidia-kernel-dkms", "", {"Conflicts": "nvidia-kernel-open-dkms", "Provides": "nvidia-kernel-%s" % version},
         marker("nvidia-kernel-dkms")),
    ] + fabric_manager_packages(version, branch)


def fabric_manager_packages(version, branch):
    # NVIDIA's repositories name Fabric Manager nvidia-fabricmanager from R580 on (the
    # -<branch> name is only provided), nvidia-fabricmanager-<branch> below.
    name = "nvidia-fabricmanager" if int(branch) >= 580 else "nvidia-fabricmanager-%s" % branch
    extra = {"Provides": "nvidia-fabricmanager-%s" % branch} if int(branch) >= 580 else {}
    files = {
        "/usr/bin/nv-fabricmanager": (_script("nv-fabricmanager", "no NVSwitch fabric here", 1), 0o755),
        "/usr/lib/systemd/system/nvidia-fabricmanager.service": (
            _unit("NVIDIA Fabric Manager", "/usr/bin/nv-fabricmanager"), 0o644),
        "/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s %s-%s\n" % (name, version, REVISION),
    }
    return [(name, "", extra, files)]


def driver_table(distro):
    """[(name, version, depends, extra, files)] of the driver packages of one CUDA repository."""
    table = []
    for branch, versions in sorted(CUDA_BRANCH_VERSIONS.items()):
        for version in versions:
            for name, depends, extra, files in driver_packages(version, branch):
                table.append((name, version + "-" + REVISION, depends, extra, files))
    for branch, versions in sorted(DISTRO_FABRIC_MANAGER.get(distro, {}).items()):
        for version in versions:
            for name, depends, extra, files in fabric_manager_packages(version, branch):
                table.append((name, version + "-" + REVISION, depends, extra, files))
    return table


def _read(name):
    """A double's source, made an executable script of the package (the node's python3)."""
    with open(os.path.join(HERE, "dcgm", name)) as handle:
        return "#!/usr/bin/python3\n" + handle.read()


def _marker(name):
    return {"/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s (gpuops.dlserver lab)\n" % name}


HOSTENGINE_UNIT = """[Unit]
Description=TEST DOUBLE of the NVIDIA DCGM host engine (gpuops.dlserver lab)
After=network.target

[Service]
Type=simple
ExecStart=/usr/bin/nv-hostengine -n --service-account nvidia-dcgm
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""


def dcgm_table():
    """[(name, version, depends, extra, files)] of DCGM and dcgm-exporter."""
    dcgm = DCGM_VERSION + "-" + REVISION
    core = "datacenter-gpu-manager-4-core (= %s)" % dcgm
    table = [("datacenter-gpu-manager-4-core", dcgm, "python3", {}, dict(_marker("datacenter-gpu-manager-4-core"), **{
        "/usr/bin/nv-hostengine": (_read("nv_hostengine.py"), 0o755),
        "/usr/lib/systemd/system/nvidia-dcgm.service": (HOSTENGINE_UNIT, 0o644)}))]
    for major in CUDA_MAJORS:
        table.append(("datacenter-gpu-manager-4-cuda%s" % major, dcgm, core, {},
                      _marker("datacenter-gpu-manager-4-cuda%s" % major)))
        table.append(("datacenter-gpu-manager-4-proprietary-cuda%s" % major, dcgm,
                      "datacenter-gpu-manager-4-proprietary (= %s)" % dcgm, {},
                      _marker("datacenter-gpu-manager-4-proprietary-cuda%s" % major)))
    table.append(("datacenter-gpu-manager-4-proprietary", dcgm, core, {},
                  _marker("datacenter-gpu-manager-4-proprietary")))
    table.append(("datacenter-gpu-manager-exporter", EXPORTER_VERSION + "-" + REVISION,
                  "datacenter-gpu-manager-4-core, python3", {},
                  dict(_marker("datacenter-gpu-manager-exporter"),
                       **{"/usr/bin/dcgm-exporter": (_read("dcgm_exporter.py"), 0o755)})))
    return table


CTK_NO_DRIVER = "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file"

DEFAULT_CONFIG = """#accept-nvidia-visible-devices-as-volume-mounts = false
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"

[nvidia-container-cli]
environment = []
ldconfig = "@/sbin/ldconfig.real"
load-kmods = true
#no-cgroups = false

[nvidia-container-runtime]
log-level = "info"
mode = "auto"
runtimes = ["docker-runc", "runc", "crun"]

[nvidia-container-runtime.modes.cdi]
annotation-prefixes = ["cdi.k8s.io/"]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]

[nvidia-container-runtime-hook]
path = "nvidia-container-runtime-hook"
skip-mode-detection = false

[nvidia-ctk]
path = "nvidia-ctk"
"""


def _tool(name, version, body):
    return ("#!/bin/sh\n# TEST DOUBLE of %s %s (gpuops.dlserver lab); not NVIDIA software.\n%s" % (name, version, body),
            0o755)


def _fail(name):
    return ("echo 'TEST DOUBLE of %s (gpuops.dlserver lab): %s' >&2\nexit 1\n" % (name, CTK_NO_DRIVER))


def ctk_release(version):
    """[(name, package version, depends, extra, files)] of one toolkit release."""
    ver = version + "-" + REVISION

    def marker(name):
        return {"/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s %s\n" % (name, ver)}

    ctk_body = ('case "$1" in\n'
                '  --version|-v) echo "NVIDIA Container Toolkit CLI version %s (TEST DOUBLE, gpuops.dlserver lab)";'
                ' exit 0;;\n'
                '  *) %s;;\nesac\n') % (version, _fail("nvidia-ctk").replace("\n", "; ").rstrip("; "))
    cli_body = ('case "$1" in\n'
                '  --version) echo "cli-version: %s (TEST DOUBLE, gpuops.dlserver lab)"; exit 0;;\n'
                '  *) %s;;\nesac\n') % (version, _fail("nvidia-container-cli").replace("\n", "; ").rstrip("; "))
    base = {
        "/usr/bin/nvidia-ctk": _tool("nvidia-ctk", version, ctk_body),
        "/usr/bin/nvidia-container-runtime": _tool("nvidia-container-runtime", version,
                                                   _fail("nvidia-container-runtime")),
        "/usr/bin/nvidia-cdi-hook": _tool("nvidia-cdi-hook", version, _fail("nvidia-cdi-hook")),
        "/etc/nvidia-container-runtime/config.toml": "# TEST DOUBLE default configuration (gpuops.dlserver lab)\n"
                                                     + DEFAULT_CONFIG,
    }
    if tuple(int(p) for p in version.split(".")) >= (1, 18, 0):
        base["/usr/lib/systemd/system/nvidia-cdi-refresh.service"] = (
            "[Unit]\nDescription=TEST DOUBLE of the NVIDIA CDI refresh service (gpuops.dlserver lab)\n"
            "ConditionPathExists=/proc/driver/nvidia/version\n\n[Service]\nType=oneshot\n"
            "ExecStart=/usr/bin/nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml\n\n"
            "[Install]\nWantedBy=multi-user.target\n")
        base["/usr/lib/systemd/system/nvidia-cdi-refresh.path"] = (
            "[Unit]\nDescription=TEST DOUBLE of the NVIDIA CDI refresh trigger (gpuops.dlserver lab)\n\n"
            "[Path]\nPathChanged=/lib/modules/%v/modules.dep\nPathChanged=/proc/driver/nvidia/version\n\n"
            "[Install]\nWantedBy=multi-user.target\n")
    base.update(marker("nvidia-container-toolkit-base"))
    tools = {"/usr/bin/nvidia-container-cli": _tool("nvidia-container-cli", version, cli_body)}
    tools.update(marker("libnvidia-container-tools"))
    toolkit = {"/usr/bin/nvidia-container-runtime-hook": _tool("nvidia-container-runtime-hook", version,
                                                               _fail("nvidia-container-runtime-hook"))}
    toolkit.update(marker("nvidia-container-toolkit"))
    return [
        ("libnvidia-container1", ver, "", {}, marker("libnvidia-container1")),
        ("libnvidia-container-tools", ver, "libnvidia-container1 (>= %s)" % ver, {}, tools),
        ("nvidia-container-toolkit-base", ver, "", {}, base),
        ("nvidia-container-toolkit", ver,
         "nvidia-container-toolkit-base (= %s), libnvidia-container-tools (>= %s), libnvidia-container-tools (<< 2.0.0)"
         % (ver, ver), {}, toolkit),
    ]


# CUDA toolkits side by side (cuda_toolkit): the release and the full version nvcc reports.
CUDA_TOOLKITS = {"12.4": "12.4.131", "12.6": "12.6.85"}
# NCCL builds per toolkit (libnccl-dev's version names the CUDA it was built for).
NCCL_BUILDS = {"12.4": "2.21.5-1", "12.6": "2.23.4-1"}

# The nvcc TEST DOUBLE: prints the release line nvcc prints (the role parses it) and, for a
# compile, checks its input and writes a marker object or a marker program that prints what the
# real check program prints when it ran on a GPU (the role runs it only where a driver is loaded).
NVCC_DOUBLE = """#!/bin/sh
# TEST DOUBLE of nvcc %(full)s (gpuops.dlserver lab); not NVIDIA software: it compiles nothing.
case "$1" in
  --version|-V)
    echo "nvcc: NVIDIA (R) Cuda compiler driver (TEST DOUBLE, gpuops.dlserver lab)"
    echo "Cuda compilation tools, release %(release)s, V%(full)s"
    exit 0;;
esac
src="" out="" compile_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2;;
    -c) compile_only=1; shift;;
    *.cu) src="$1"; shift;;
    *) shift;;
  esac
done
[ -r "$src" ] || { echo "nvcc fatal   : Don't know what to do with '$src' (TEST DOUBLE)" >&2; exit 1; }
grep -q "__global__" "$src" || { echo "TEST DOUBLE nvcc: no kernel in $src" >&2; exit 2; }
[ -n "$out" ] || out=a.out
if [ "$compile_only" = 1 ]; then
  echo "TEST DOUBLE object of $src, CUDA %(release)s" > "$out"
else
  printf '#!/bin/sh\n# TEST DOUBLE program (CUDA %(release)s)\necho "gpuops-cuda-ok 42"\n' > "$out"
  chmod 0755 "$out"
fi
"""


def cuda_toolkit_table():
    """[(name, version, depends, extra, files)] of the CUDA toolkits, cuDNN and NCCL doubles."""
    table = []
    for release, full in sorted(CUDA_TOOLKITS.items()):
        dashed = release.replace(".", "-")
        name = "cuda-toolkit-" + dashed
        files = {"/usr/local/cuda-%s/bin/nvcc" % release: (NVCC_DOUBLE % {"release": release, "full": full}, 0o755),
                 "/usr/local/cuda-%s/lib64/TEST-DOUBLE" % release: "TEST DOUBLE libraries of CUDA %s\n" % release}
        files.update(_marker(name))
        table.append((name, full + "-" + REVISION, "", {}, files))
        for tool in ("nsight-systems", "nsight-compute"):
            tool_name = "cuda-%s-%s" % (tool, dashed)
            table.append((tool_name, full + "-" + REVISION, "", {}, _marker(tool_name)))
    table.append(("libcudnn9-dev-cuda-12", "9.5.1.17-" + REVISION, "", {}, _marker("libcudnn9-dev-cuda-12")))
    for release, build in sorted(NCCL_BUILDS.items()):
        version = "%s+cuda%s%s" % (build, release, SUFFIX)
        table.append(("libnccl2", version, "", {}, _marker("libnccl2")))
        table.append(("libnccl-dev", version, "libnccl2 (= %s)" % version, {}, _marker("libnccl-dev")))
    return table


def cuda_table(repo):
    """The driver, DCGM and CUDA toolkit packages of one CUDA repository directory (``debian12/x86_64``)."""
    return driver_table(repo.split("/")[0]) + dcgm_table() + cuda_toolkit_table()


def ctk_table(repo):
    del repo
    return [row for version in CTK_VERSIONS for row in ctk_release(version)]


SPECS = {
    "cuda": {
        "base": "apt/cuda", "repos": {"debian12/x86_64": "debian12/x86_64", "debian13/x86_64": "debian13/x86_64"},
        "what": "NVIDIA's CUDA repository", "roles": "nvidia_driver, dcgm_exporter and cuda_toolkit roles",
        "key_uid": "gpuops.dlserver lab TEST DOUBLE CUDA repository signing key <lab@gpuops.invalid>",
        "gnupg": "cuda-double-gnupg", "keyring": "testdouble-archive-keyring.gpg", "armor": False,
        "table": cuda_table, "section": "non-free/libs",
        # the key where the roles look for it under gpuops_mirror_url (NVIDIA's key file names, as
        # plugins/module_utils/packages/cuda_repos.py REPOSITORIES gives them; a unit test keeps them in step)
        "key_files": ["debian12/x86_64/3bf863cc.pub", "debian13/x86_64/8793F200.pub"],
        "recipe": [os.path.join(HERE, "dcgm", "nv_hostengine.py"), os.path.join(HERE, "dcgm", "dcgm_exporter.py")],
        "manifest": {},
    },
    "ctk": {
        "base": "apt/libnvidia-container", "repos": {"amd64": "stable/deb/amd64"},
        "what": "NVIDIA's libnvidia-container repository", "roles": "nvidia_container_toolkit role",
        "key_uid": "gpuops.dlserver lab TEST DOUBLE libnvidia-container repository signing key <lab@gpuops.invalid>",
        "gnupg": "ctk-double-gnupg", "keyring": "gpgkey", "armor": True,
        "table": ctk_table, "section": "utils", "recipe": [], "manifest": {"versions": CTK_VERSIONS},
        # nvidia_container_toolkit_keyring_url under gpuops_mirror_url (plugins/module_utils/packages/mirror_urls.py)
        "key_files": ["gpgkey"],
    },
}
