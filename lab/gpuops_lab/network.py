"""The lab's docker network (172.30.99.0/24 unless GPUOPS_LAB_SUBNET)."""

from .common import LABEL, LabError, dynamic_range, gateway, log, run


def ensure_network(cfg):
    res = run(["docker", "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}}{{end}}", cfg.network],
              check=False, capture=True)
    if res.returncode == 0:
        if res.stdout.strip() != cfg.subnet:
            raise LabError("docker network %s exists with subnet %s, not %s; remove it "
                           "(docker network rm %s) or set GPUOPS_LAB_SUBNET"
                           % (cfg.network, res.stdout.strip(), cfg.subnet, cfg.network))
        return
    log("creating docker network %s (%s)" % (cfg.network, cfg.subnet))
    cmd = ["docker", "network", "create", "--subnet", cfg.subnet, "--gateway", gateway(cfg)]
    if dynamic_range(cfg):
        cmd += ["--ip-range", dynamic_range(cfg)]
    run(cmd + ["--label", LABEL + "=network", cfg.network], capture=True)
