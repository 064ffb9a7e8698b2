"""No no_log input (a BMC or scrape password) reaches the plan's made_from digests, the plan, a status file
or the run's output: a real ansible-playbook run plans a host with ipmi_exporter's module password, common's
BMC password and Prometheus's basic-auth password, writes a status file and the plan with status_file, and
every byte is grepped for them."""
import json
import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import run_state

SECRETS = {"ipmi": "Ipmi.pw-4711", "bmc": "Bmc.pw-0815", "scrape": "Scrape.pw-1234"}
PLAY = """- name: Plan a host whose inputs hold passwords, record it, keep what the plan returned
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Plan
      gpuops.dlserver.host_plan: {in_container: true, probe: {ansible_facts: {gpuops_gpu: "{{ facts }}"}}}
      register: planned
    - name: Record
      gpuops.dlserver.__private.status_file:
        path: "{{ out | dirname }}/status/ipmi_exporter.json"
        status: {run: true, reason: "remote mode", modules: [default]}
        plan: "{{ planned.plan }}"
    - name: Keep
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'plan': planned.plan, 'made_from': planned.made_from} | to_json }}"
"""


def test_no_password_in_the_digests_the_plan_the_status_files_or_the_output(tmp_path, run_play):
    extra = {"ipmi_exporter_remote": True, "bmc_address": "10.0.0.7", "gpuops_bmc_user": "admin",
             "gpuops_bmc_password": SECRETS["bmc"], "prometheus_node_exporter_basic_auth_username": "prometheus",
             "prometheus_node_exporter_basic_auth_password": SECRETS["scrape"], "prometheus_node_exporter_scheme": "https",
             "ipmi_exporter_modules": {"default": {"user": "monitor", "password": SECRETS["ipmi"]}}}
    res = run_play(tmp_path, PLAY, "plan_cpu_only.yml", json.dumps(extra))
    assert res.returncode == 0, res.stdout + res.stderr
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["made_from"]["inputs"]["ipmi_exporter"]
    files = [os.path.join(root, name) for root, _dirs, names in os.walk(str(tmp_path / "status")) for name in names]
    assert any(f.endswith("ipmi_exporter.json") for f in files), files
    texts = [res.stdout, res.stderr, (tmp_path / "out.json").read_text()] + [open(f).read() for f in files]
    for secret in SECRETS.values():
        assert not any(secret in text for text in texts), secret


def test_a_password_changes_no_digest_and_shows_in_none():
    spec = {"ipmi_exporter_modules": {"type": "dict", "no_log": True}, "ipmi_exporter_remote": {"type": "bool"}}
    secrets = {"ipmi_exporter": run_state.secret_names(spec, "ipmi_exporter_")}
    assert secrets == {"ipmi_exporter": ["modules"]}
    one = {"ipmi_exporter": {"remote": True, "modules": {"default": {"password": SECRETS["ipmi"]}}}}
    two = {"ipmi_exporter": {"remote": True, "modules": {"default": {"password": "Other.pw"}}}}
    made = run_state.made_from("1-2", {}, one, secrets)
    assert made == run_state.made_from("1-2", {}, two, secrets)
    assert made != run_state.made_from("1-2", {}, {"ipmi_exporter": {"remote": False, "modules": {}}}, secrets)
    assert run_state.plan_current(made, "1-2", {}, "ipmi_exporter", two["ipmi_exporter"], secrets["ipmi_exporter"])[0]
    # without the secrets named, the digest would be of the password too
    assert run_state.made_from("1-2", {}, one) != run_state.made_from("1-2", {}, two)
