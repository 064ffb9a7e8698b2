# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only repository helper of gpuops.dlserver.nvidia_driver (runs on the target).

The role runs it with ``ansible.builtin.script`` during preflight, before it changes
anything, and reads one JSON document from its standard output. Standard library only,
Python 3.8+ (it runs on Debian 12/13, Ubuntu 22.04/24.04 and EL 9 hosts).

    gpuops_nvidia_repo.py apt-sources   the host's apt sources (sources.list, *.list,
                                        *.sources) and, for Debian, the stanzas that add
                                        the components the driver needs to the archive
                                        the host already uses
    gpuops_nvidia_repo.py kernels       the installed kernel releases
    gpuops_nvidia_repo.py resolve       the package versions the repositories carry (read
                                        into a scratch apt directory, so the host's apt
                                        state is not touched, or from the host's apt
                                        cache, or with dnf repoquery on EL 9), the
                                        installed ones, and the driver version to install
                                        with every package's exact version, or the
                                        problems, each naming the variable to change

Input comes as JSON in the environment variable GPUOPS_NVIDIA_REPO (see each command).
The answer is ``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}``; the exit status
is 0 either way, so the role can fail with a message that names the variable to change.
"""

from __future__ import absolute_import, division, print_function

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

__metaclass__ = type

ENV = "GPUOPS_NVIDIA_REPO"
OWN_PREFIX = "gpuops-nvidia-"
KEYRING_PLACEHOLDER = "@GPUOPS_KEYRING@"
APT_HELPER = "/usr/lib/apt/apt-helper"


# --------------------------------------------------------------------------- versions

def _order(char):
    """dpkg's character order: ~ sorts before everything, letters before non-letters."""
    if char == "~":
        return -1
    if char.isdigit():
        return 0
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _compare_part(left, right):
    """dpkg's verrevcmp for one part (upstream version or revision)."""
    i = j = 0
    while i < len(left) or j < len(right):
        first_diff = 0
        while (i < len(left) and not left[i].isdigit()) or (j < len(right) and not right[j].isdigit()):
            lc = _order(left[i]) if i < len(left) else 0
            rc = _order(right[j]) if j < len(right) else 0
            if lc != rc:
                return lc - rc
            i += 1
            j += 1
        while i < len(left) and left[i] == "0":
            i += 1
        while j < len(right) and right[j] == "0":
            j += 1
        while i < len(left) and left[i].isdigit() and j < len(right) and right[j].isdigit():
            if not first_diff:
                first_diff = ord(left[i]) - ord(right[j])
            i += 1
            j += 1
        if i < len(left) and left[i].isdigit():
            return 1
        if j < len(right) and right[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def split_version(version):
    """(epoch, upstream, revision) of a Debian or RPM version-release string."""
    version = version.strip()
    epoch = 0
    if ":" in version:
        head, version = version.split(":", 1)
        epoch = int(head) if head.isdigit() else 0
    upstream, sep, revision = version.rpartition("-")
    if not sep:
        upstream, revision = version, ""
    return epoch, upstream, revision


def compare_versions(left, right):
    """Negative, zero or positive as left is older, equal or newer (dpkg ordering)."""
    le, lu, lr = split_version(left)
    re_, ru, rr = split_version(right)
    if le != re_:
        return le - re_
    result = _compare_part(lu, ru)
    if result:
        return result
    return _compare_part(lr, rr)


def upstream_of(version):
    """The driver version inside a package version: 535.261.03 of 535.261.03-1~deb12u1."""
    return split_version(version)[1]


def branch_of(version):
    match = re.match(r"^(\d+)", upstream_of(version))
    return int(match.group(1)) if match else None


def sort_desc(versions):
    out = []
    for version in versions:
        if version not in out:
            out.append(version)
    # insertion sort with the dpkg comparison (lists are short)
    result = []
    for version in out:
        index = 0
        while index < len(result) and compare_versions(result[index], version) > 0:
            index += 1
        result.insert(index, version)
    return result


def summarise(versions, versioned, branch):
    """What the role decides from: for the packages that carry the driver version
    (``versioned``), the driver versions of ``branch`` that every one of them has, newest
    first, and for every package the newest package version of each driver version."""
    branch = int(branch) if branch not in (None, "") else None
    full = {}
    for name, found in versions.items():
        per = {}
        for version in sort_desc(found):
            per.setdefault(upstream_of(version), version)
        full[name] = per
    branches = set()
    for name in versioned:
        for version in versions.get(name, []):
            if branch_of(version) is not None:
                branches.add(branch_of(version))
    common = None
    for name in versioned:
        ups = [upstream_of(v) for v in sort_desc(versions.get(name, [])) if branch_of(v) == branch]
        if common is None:
            common = []
            for item in ups:
                if item not in common:
                    common.append(item)
        else:
            common = [u for u in common if u in ups]
    return {
        "full": full,
        "branches": sorted(branches),
        "common": common or [],
        "missing": sorted(name for name in versions if not versions[name]),
    }


# --------------------------------------------------------------------------- apt sources

def _one_line_entries(text, path):
    entries = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        options = {}
        match = re.match(r"^(deb|deb-src)\s+\[([^\]]*)\]\s+(.*)$", line)
        if match:
            kind, opts, rest = match.groups()
            for item in opts.split():
                if "=" in item:
                    key, value = item.split("=", 1)
                    options[key.lower()] = value
        else:
            parts = line.split(None, 1)
            if len(parts) != 2 or parts[0] not in ("deb", "deb-src"):
                continue
            kind, rest = parts
        words = rest.split()
        if len(words) < 2:
            continue
        entries.append({
            "file": path, "format": "one-line", "types": [kind], "uris": [words[0]],
            "suites": [words[1]], "components": words[2:],
            "signed_by": options.get("signed-by"),
            "enabled": options.get("enabled", "yes").lower() not in ("no", "false", "0"),
        })
    return entries


def _deb822_stanzas(text):
    stanzas, fields, key = [], {}, None
    for raw in text.splitlines() + [""]:
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if fields:
                stanzas.append(fields)
            fields, key = {}, None
            continue
        if raw[0] in " \t" and key is not None:
            value = raw.strip()
            fields[key] += "\n" + ("" if value == "." else value)
            continue
        if ":" not in raw:
            continue
        key, value = raw.split(":", 1)
        key = key.strip().lower()
        fields[key] = value.strip()
    return stanzas


def _deb822_entries(text, path):
    entries = []
    for fields in _deb822_stanzas(text):
        signed = fields.get("signed-by")
        entries.append({
            "file": path, "format": "deb822",
            "types": fields.get("types", "").split(),
            "uris": fields.get("uris", "").split(),
            "suites": fields.get("suites", "").split(),
            "components": fields.get("components", "").split(),
            "signed_by": signed.strip() if signed else None,
            "enabled": fields.get("enabled", "yes").strip().lower() not in ("no", "false", "0"),
        })
    return entries


def read_apt_sources(root="/", exclude_prefix=OWN_PREFIX):
    """Every apt source entry of the host, except the files this role owns."""
    entries = []
    main = os.path.join(root, "etc/apt/sources.list")
    if os.path.isfile(main):
        with open(main) as handle:
            entries.extend(_one_line_entries(handle.read(), "/etc/apt/sources.list"))
    parts = os.path.join(root, "etc/apt/sources.list.d")
    if os.path.isdir(parts):
        for name in sorted(os.listdir(parts)):
            if name.startswith(exclude_prefix):
                continue
            path = os.path.join(parts, name)
            shown = "/etc/apt/sources.list.d/" + name
            if name.endswith(".list"):
                with open(path) as handle:
                    entries.extend(_one_line_entries(handle.read(), shown))
            elif name.endswith(".sources"):
                with open(path) as handle:
                    entries.extend(_deb822_entries(handle.read(), shown))
    return entries


def debian_stanzas(entries, codename, components, mirror=None, keyring=None):
    """Stanzas that give the Debian archive(s) the host uses the wanted ``components``.

    Returns ``(missing, full, sources)``: ``missing`` adds only the components the host's
    own entries lack (what the role writes; empty when nothing is missing), ``full`` lists
    every wanted component (what the scratch query reads), ``sources`` names the files the
    archive entries came from. With ``mirror`` the host's entries are not read: the
    mirror's release and -updates suites are used, signed by ``keyring``.
    """
    suites = (codename, codename + "-updates", codename + "-security")
    if mirror:
        found = [{"uri": mirror, "suite": s, "signed_by": keyring, "present": [], "file": None}
                 for s in suites[:2]]
    else:
        by_key = {}
        for entry in entries:
            if not entry["enabled"] or "deb" not in entry["types"]:
                continue
            for uri in entry["uris"]:
                for suite in entry["suites"]:
                    if suite not in suites:
                        continue
                    key = (uri.rstrip("/") + "/", suite)
                    item = by_key.setdefault(key, {"uri": key[0], "suite": suite, "signed_by": None,
                                                   "present": [], "file": entry["file"], "main": False})
                    item["present"].extend(c for c in entry["components"] if c not in item["present"])
                    item["main"] = item["main"] or "main" in entry["components"]
                    if entry["signed_by"] and not item["signed_by"]:
                        item["signed_by"] = entry["signed_by"]
        found = [item for key, item in sorted(by_key.items()) if item["main"]]

    def group(with_missing):
        stanzas = []
        for item in found:
            comps = [c for c in components if not with_missing or c not in item["present"]]
            if not comps:
                continue
            for stanza in stanzas:
                if (stanza["uri"], stanza["signed_by"], stanza["components"]) == \
                        (item["uri"], item["signed_by"], comps):
                    stanza["suites"].append(item["suite"])
                    break
            else:
                stanzas.append({"uri": item["uri"], "suites": [item["suite"]], "components": comps,
                                "signed_by": item["signed_by"]})
        return stanzas

    sources = sorted(set(item["file"] for item in found if item["file"]))
    return group(True), group(False), sources


def render_deb822(stanzas, header=None):
    """deb822 text of ``stanzas`` (uri, suites, components, signed_by)."""
    out = []
    if header:
        out.extend("# " + line if line else "#" for line in header.splitlines())
        out.append("")
    for stanza in stanzas:
        out.append("Types: deb")
        out.append("URIs: %s" % stanza["uri"])
        out.append("Suites: %s" % " ".join(stanza["suites"]))
        if stanza.get("components"):
            out.append("Components: %s" % " ".join(stanza["components"]))
        signed = stanza.get("signed_by")
        if signed:
            lines = signed.split("\n")
            out.append("Signed-By: %s" % lines[0])
            out.extend(" " + (line if line else ".") for line in lines[1:])
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------- commands

def _run(args, env=None):
    merged = dict(os.environ)
    merged["LC_ALL"] = "C"
    if env:
        merged.update(env)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=merged)
    out, err = proc.communicate()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def parse_madison(text):
    """{package: [versions]} from ``apt-cache madison`` output."""
    found = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 3 or not parts[0] or not parts[1]:
            continue
        if "Sources" in parts[2]:
            continue
        found.setdefault(parts[0], [])
        if parts[1] not in found[parts[0]]:
            found[parts[0]].append(parts[1])
    return found


def parse_fingerprints(text):
    """Primary-key fingerprints from ``gpg --with-colons`` output."""
    fprs, after_pub = [], False
    for line in text.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            after_pub = True
        elif fields[0] == "fpr" and after_pub and len(fields) > 9:
            fprs.append(fields[9].upper())
            after_pub = False
    return fprs


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(65536), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_keyring(spec, work):
    """Download the repository key into ``work`` and check its checksum and fingerprint."""
    dest = os.path.join(work, spec.get("name") or "keyring.asc")
    sha = (spec.get("sha256") or "").lower()
    if sha.startswith("sha256:"):
        sha = sha[len("sha256:"):]
    url = spec["url"]
    if url.startswith("file://"):
        shutil.copyfile(url[len("file://"):], dest)
    elif not os.path.exists(APT_HELPER):
        try:
            from urllib.request import urlopen  # pylint: disable=import-outside-toplevel
            with urlopen(url, timeout=60) as resp, open(dest, "wb") as handle:  # nosec: URL from the role's variables
                shutil.copyfileobj(resp, handle)
        except (IOError, OSError, ValueError) as exc:
            raise RuntimeError("cannot download the repository key %s: %s" % (url, exc))
    else:
        args = [APT_HELPER, "-o", "APT::Sandbox::User=root", "download-file", url, dest]
        if sha:
            args.append("SHA256:" + sha)
        rc, out, err = _run(args)
        if rc != 0:
            raise RuntimeError("cannot download the repository key %s: %s" % (url, (err or out).strip()[-600:]))
    actual = _sha256(dest)
    if sha and actual != sha:
        raise RuntimeError("the repository key %s has sha256 %s, expected %s" % (url, actual, sha))
    fingerprints = []
    wanted = re.sub(r"\s", "", spec.get("fingerprint") or "").upper()
    if wanted:
        gpg = shutil.which("gpg")
        if not gpg:
            raise RuntimeError("gpg is not installed, so the fingerprint of the repository key %s cannot be "
                               "checked; install gpg or give the key's sha256 checksum" % url)
        home = tempfile.mkdtemp(prefix="gnupg.", dir=work)
        rc, out, err = _run([gpg, "--batch", "--no-tty", "--with-colons", "--show-keys", dest],
                            env={"GNUPGHOME": home})
        if rc != 0:
            raise RuntimeError("the repository key %s is not an OpenPGP key: %s" % (url, err.strip()[-400:]))
        fingerprints = parse_fingerprints(out)
        if wanted not in fingerprints:
            raise RuntimeError("the repository key %s has fingerprint(s) %s, expected %s"
                               % (url, ", ".join(fingerprints) or "none", wanted))
    return dest, actual, fingerprints


def _apt_options(work):
    return ["-o", "Dir::Etc::SourceList=/dev/null",
            "-o", "Dir::Etc::SourceParts=%s/sources.list.d" % work,
            "-o", "Dir::Etc::Preferences=/dev/null",
            "-o", "Dir::Etc::PreferencesParts=%s/preferences.d" % work,
            "-o", "Dir::State::Lists=%s/lists" % work,
            "-o", "Dir::State::Status=/var/lib/dpkg/status",
            "-o", "Dir::Cache=%s/cache" % work,
            "-o", "APT::Sandbox::User=root",
            "-o", "Debug::NoLocking=true"]


def apt_query(request):
    """Versions of ``packages`` in the repository described by ``sources`` (deb822 text),
    read into a scratch directory that is removed afterwards; with ``system: true`` from
    the host's own apt cache instead."""
    packages = list(request.get("packages") or [])
    answer = {"ok": True, "keyring": None}
    work = tempfile.mkdtemp(prefix="gpuops-nvidia-repo.")
    try:
        options = []
        if not request.get("system"):
            for sub in ("sources.list.d", "preferences.d", "lists/partial", "cache/archives/partial"):
                os.makedirs(os.path.join(work, sub))
            sources = request.get("sources") or ""
            keyring = request.get("keyring")
            if keyring and keyring.get("url"):
                path, sha, fprs = fetch_keyring(keyring, work)
                answer["keyring"] = {"sha256": sha, "fingerprints": fprs}
                sources = sources.replace(KEYRING_PLACEHOLDER, path)
            with open(os.path.join(work, "sources.list.d", "query.sources"), "w") as handle:
                handle.write(sources)
            options = _apt_options(work)
            rc, out, err = _run(["apt-get"] + options + ["-q", "update"])
            problems = [line for line in (err + out).splitlines() if line.startswith(("E:", "W:", "Err:"))]
            if rc != 0 or any(line.startswith(("E:", "Err:")) for line in problems):
                raise RuntimeError("apt-get update of the repository failed: %s" % " | ".join(problems)[-1200:])
            answer["warnings"] = problems
        found = {}
        if packages:
            rc, out, err = _run(["apt-cache"] + options + ["madison"] + packages)
            if rc != 0:
                raise RuntimeError("apt-cache madison failed: %s" % err.strip()[-600:])
            found = parse_madison(out)
        answer["versions"] = dict((name, sort_desc(found.get(name, []))) for name in packages)
    except (RuntimeError, OSError) as exc:
        return {"ok": False, "error": str(exc)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return answer


def dnf_query(request):
    """Versions of ``packages`` in the dnf repository ``url`` (modular filtering off), or
    in the host's enabled repositories with ``system: true``."""
    packages = list(request.get("packages") or [])
    dnf = shutil.which("dnf")
    if not dnf:
        return {"ok": False, "error": "dnf not found"}
    keyring = None
    if request.get("keyring") and request["keyring"].get("url"):
        work = tempfile.mkdtemp(prefix="gpuops-nvidia-repo.")
        try:
            dummy, sha, fprs = fetch_keyring(request["keyring"], work)
            keyring = {"sha256": sha, "fingerprints": fprs}
        except (RuntimeError, OSError) as exc:
            return {"ok": False, "error": str(exc)}
        finally:
            shutil.rmtree(work, ignore_errors=True)
    args = [dnf, "-q", "repoquery", "--qf", "%{name} %{epoch}:%{version}-%{release}"]
    if not request.get("system"):
        repo = "gpuops-nvidia-query"
        args += ["--disablerepo=*", "--repofrompath=%s,%s" % (repo, request["url"]),
                 "--enablerepo=" + repo, "--setopt=%s.module_hotfixes=1" % repo,
                 "--setopt=%s.gpgcheck=0" % repo]
    rc, out, err = _run(args + packages)
    if rc != 0:
        return {"ok": False, "error": "dnf repoquery failed: %s" % err.strip()[-800:]}
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in packages:
            version = parts[1][2:] if parts[1].startswith("0:") else parts[1]
            found.setdefault(parts[0], []).append(version)
    return {"ok": True, "keyring": keyring,
            "versions": dict((name, sort_desc(found.get(name, []))) for name in packages)}


def apt_sources(request):
    entries = read_apt_sources(request.get("root") or "/")
    missing, full, sources = debian_stanzas(
        entries, request.get("codename") or "", request.get("components") or [],
        mirror=request.get("mirror") or None, keyring=request.get("keyring") or None)
    return {"ok": True, "entries": entries, "missing": missing, "full": full, "from_files": sources,
            "missing_text": render_deb822(missing) if missing else "",
            "full_text": render_deb822(full) if full else ""}


def installed_packages(backend, names):
    """{name: {"version": ..., "held": bool}} of the installed packages among ``names``."""
    found = {}
    if not names:
        return found
    if backend == "dnf":
        rc, out, err = _run(["rpm", "-q", "--qf", "%{NAME}\t%{EPOCH}:%{VERSION}-%{RELEASE}\n"] + list(names))
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 2 and parts[0] in names:
                version = parts[1].replace("(none):", "")
                version = version[2:] if version.startswith("0:") else version
                found[parts[0]] = {"version": version, "held": False}
        return found
    rc, out, err = _run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${db:Status-Abbrev}\n"] + list(names))
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0] in names and parts[2][1:2] == "i":
            found[parts[0]] = {"version": parts[1], "held": parts[2][:1] == "h"}
    return found


def _full_version(summary, name, target, installed):
    per = summary["full"].get(name, {})
    if target in per:
        return per[target]
    have = installed.get(name, {}).get("version")
    if have and upstream_of(have) == target:
        return have
    return None


def decide(request, versions, installed):
    """The driver version to install and every package's exact version, or the problems.

    ``request``: branch, version (the user's, may be ""), upgrade, versioned (packages that
    carry the driver version, the kernel-module package first), fabric_manager, nvlsm,
    required (packages that must exist in some version), repo_text / fm_repo_text (for
    messages). ``versions``: {package: [versions]}; ``installed``: installed_packages().
    """
    branch = str(request.get("branch") or "")
    wanted = re.sub(r"^\d+:", "", request.get("version") or "")
    versioned = list(request.get("versioned") or [])
    fm = list(request.get("fabric_manager") or [])
    repo = request.get("repo_text") or "the repository"
    fm_repo = request.get("fm_repo_text") or repo
    summary = summarise(dict((n, versions.get(n, [])) for n in versioned), versioned, branch)
    fm_summary = summarise(dict((n, versions.get(n, [])) for n in fm), fm, branch)
    first = versioned[0] if versioned else None
    have = installed.get(first, {}).get("version") if first else None
    have_up = upstream_of(have) if have else ""
    if wanted:
        target = upstream_of(wanted) if "-" in wanted else wanted
    elif have_up and str(branch_of(have_up)) == branch and not request.get("upgrade"):
        target = have_up
    else:
        target = summary["common"][0] if summary["common"] else ""
    keep = bool(target) and target == have_up
    problems = []
    missing = [n for n in list(request.get("required") or []) + versioned if not versions.get(n)]
    if missing:
        problems.append("package(s) %s not found in %s (branch %s). Check nvidia_driver_branch, "
                        "nvidia_driver_kernel_modules and nvidia_driver_source"
                        % (", ".join(sorted(set(missing))), repo, branch))
    elif not keep and (not branch.isdigit() or int(branch) not in summary["branches"]):
        problems.append("nvidia_driver_branch %s: %s has no driver of this branch; branches there: %s"
                        % (branch, repo, ", ".join(str(b) for b in summary["branches"]) or "none"))
    elif not keep and target not in summary["common"]:
        per = "; ".join("%s: %s" % (n, " ".join(sorted(summary["full"].get(n, {}), reverse=True)) or "none")
                        for n in versioned)
        what = "nvidia_driver_version %s" % request.get("version") if wanted else "branch %s" % branch
        problems.append("%s: %s has no version that every one of %s carries; versions of branch %s there: %s "
                        "(per package: %s)" % (what, repo, ", ".join(versioned), branch,
                                               ", ".join(summary["common"]) or "none", per))
    elif "-" in wanted and not keep and summary["full"].get(first, {}).get(target) != wanted:
        problems.append("nvidia_driver_version %s: %s has %s %s for driver %s; give the driver version alone "
                        "(%s) or that package version" % (request.get("version"), repo, first,
                                                          summary["full"].get(first, {}).get(target, "none"),
                                                          target, target))
    pinned = {}
    if not problems:
        for name in versioned:
            exact = wanted if ("-" in wanted and not keep) else _full_version(summary, name, target, installed)
            pinned[name] = exact
        for name in fm:
            exact = _full_version(fm_summary, name, target, installed)
            if not exact:
                problems.append("this host needs Fabric Manager at exactly the driver version %s, but %s has %s in "
                                "versions %s. Set nvidia_driver_version to a version both the driver and Fabric "
                                "Manager carry" % (target, fm_repo, name,
                                                   ", ".join(sorted(fm_summary["full"].get(name, {}), reverse=True))
                                                   or "none"))
            pinned[name] = exact
        lacking = [n for n in request.get("nvlsm") or [] if not versions.get(n)]
        if lacking:
            problems.append("this host needs the NVLink subnet manager, but %s lacks %s" % (fm_repo, ", ".join(lacking)))
    change = bool(pinned) and any(installed.get(n, {}).get("version") != v for n, v in pinned.items())
    return {
        "target": target, "installed_version": have_up, "keep": keep, "pinned": pinned, "change": change,
        "held": sorted(n for n in pinned if installed.get(n, {}).get("held")),
        "branches": summary["branches"], "common": summary["common"], "problems": problems,
    }


def installed_kernels(backend):
    """Kernel releases of the installed kernel packages (linux-image-<release>, kernel-core)."""
    if backend == "dnf":
        rc, out, err = _run(["rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}.%{ARCH}\n", "kernel-core"])
        return sorted(set(line.strip() for line in out.splitlines() if rc == 0 and line.strip()))
    rc, out, err = _run(["dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\n", "linux-image-[0-9]*"])
    kernels = set()
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1][1:2] == "i":
            kernels.add(parts[0][len("linux-image-"):])
    return sorted(kernels)


def kernels(request):
    return {"ok": True, "kernels": installed_kernels(request.get("backend") or "apt")}


def decide_activation(target, state):
    """How the installed driver ``target`` gets loaded, from the host's ``state``.

    ``state``: load (the kernel is this host's; false in containers), load_reason, loaded
    and loaded_version (the nvidia module now), nouveau_loaded, reboot (the user's
    nvidia_driver_reboot). Actions: none (the pinned version runs), load (modprobe after the
    install, nothing holds the GPUs), reboot (handler), deferred (nvidia_driver_reboot:
    false: recorded, verified by the run after the reboot), not_applicable (container).
    """
    if not state.get("load"):
        return {"action": "not_applicable", "reason": state.get("load_reason") or "the kernel is not this host's",
                "services_start": False}
    loaded, version = bool(state.get("loaded")), state.get("loaded_version")
    if loaded and version == target:
        return {"action": "none", "reason": "driver %s is loaded" % target, "services_start": True}
    if loaded or state.get("nouveau_loaded"):
        holder = "driver %s is loaded" % version if loaded else "nouveau is loaded"
        if state.get("reboot"):
            return {"action": "reboot", "services_start": True,
                    "reason": "%s: driver %s needs a reboot (rebooting: nvidia_driver_reboot is true)"
                              % (holder, target)}
        return {"action": "deferred", "services_start": False,
                "reason": "%s: driver %s needs a reboot (deferred: nvidia_driver_reboot is false; reboot when "
                          "convenient and run the role again)" % (holder, target)}
    return {"action": "load", "services_start": True,
            "reason": "no NVIDIA driver or nouveau is loaded: the modules are loaded right after the install"}


def resolve(request):
    """Read every repository of ``queries``, the installed packages and kernels, and decide()."""
    backend = request.get("backend") or "apt"
    versions, keyring, notes = {}, None, []
    kernel_list = installed_kernels(backend)
    running = request.get("running_kernel") or ""
    template = request.get("headers_template") or ""
    wanted_kernels = [running] + [k for k in kernel_list if k != running] if running else kernel_list
    headers = [template.replace("{kernel}", k) for k in wanted_kernels] if template else []
    queries = list(request.get("queries") or [])
    if headers and backend == "apt":
        queries.append({"name": "headers", "text": "the host's own apt repositories", "system": True,
                        "packages": headers})
    for query in queries:
        answer = dnf_query(query) if backend == "dnf" else apt_query(query)
        if not answer.get("ok"):
            what = query.get("text") or query.get("name")
            return {"ok": False, "error": "cannot read %s: %s" % (what, answer.get("error")),
                    "query": query.get("name")}
        for name, found in answer["versions"].items():
            versions.setdefault(name, [])
            versions[name] = sort_desc(versions[name] + found)
        if answer.get("keyring"):
            keyring = answer["keyring"]
        notes.extend(answer.get("warnings") or [])
    names = set(versions) | set(headers)
    for key in ("versioned", "fabric_manager", "nvlsm", "other"):
        names.update(request.get(key) or [])
    installed = installed_packages(backend, sorted(names))
    result = decide(request, versions, installed)
    result["activation"] = decide_activation(result["target"], request.get("activation") or {})
    result.update({
        "ok": True, "versions": versions, "installed": installed, "keyring": keyring, "warnings": notes,
        "kernels": kernel_list,
        "headers": [{"kernel": k, "package": h, "running": k == running, "installed": h in installed,
                     "available": bool(versions.get(h)) if backend == "apt" else None}
                    for k, h in zip(wanted_kernels, headers)],
    })
    return result


COMMANDS = {"apt-sources": apt_sources, "kernels": kernels, "resolve": resolve}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in COMMANDS:
        usage = "usage: %s {%s}" % (os.path.basename(sys.argv[0]), ",".join(sorted(COMMANDS)))
        print(json.dumps({"ok": False, "error": usage}))
        return 0
    try:
        request = json.loads(os.environ.get(ENV) or "{}")
    except ValueError as exc:
        print(json.dumps({"ok": False, "error": "%s is not JSON: %s" % (ENV, exc)}))
        return 0
    print(json.dumps(COMMANDS[argv[0]](request), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
