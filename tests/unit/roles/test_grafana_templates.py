"""Grafana provisioning files of the prometheus role (issue 19): every value is written by a YAML
dump, so a newline in the data source URL adds no key and a ``#`` cuts nothing off."""
import os

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TEMPLATES = os.path.join(REPO, "roles", "prometheus", "templates")


def render(name, **prometheus):
    with open(os.path.join(TEMPLATES, name)) as handle:
        source = handle.read()
    inputs = dict({"grafana_dashboards_dir": "/var/lib/grafana/dashboards", "grafana_datasource_url": ""},
                  **prometheus)
    templar = Templar(loader=DataLoader(), variables={
        "__prometheus": inputs, "inventory_hostname": "mon-01", "ansible_managed": "Ansible managed"})
    return yaml.safe_load(templar.template(trust_as_template(source)))


URLS = ["http://prom.example:9090", "http://prom.example:9090\n    isDefault: true\n    basicAuth: true",
        "http://prom.example:9090/#frag", "http://p:9090 # comment", "http://p:9090/'\"{{x}}", "http://p:9090\r\n- x",
        "http://p:9090/ünïcode", ""]


@pytest.mark.parametrize("url", URLS, ids=range(len(URLS)))
def test_datasource_url_is_one_value(url):
    data = render("grafana-datasources.yml.j2", grafana_datasource_url=url)
    assert data["apiVersion"] == 1
    assert len(data["datasources"]) == 1
    source = data["datasources"][0]
    assert set(source) == {"name", "uid", "type", "access", "url", "isDefault"}
    assert source["url"] == (url or "http://mon-01:9090")
    assert source["isDefault"] is False


@pytest.mark.parametrize("path", ["/var/lib/grafana/dashboards", "/var/lib/g #x", "/var/lib/g\nfoo: bar",
                                  "/var/lib/g: x"])
def test_dashboards_path_is_one_value(path):
    data = render("grafana-dashboards.yml.j2", grafana_dashboards_dir=path)
    provider = data["providers"][0]
    assert provider["options"] == {"path": path}
    assert provider["name"] == "gpuops" and provider["folder"] == "GPU fleet"
