#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""contrib/forward, the forward-scope deployment: the config validates
with scope forward and names br-fenced; the compose file parses, joins the
external network only (nothing compose creates itself), and points the
workload's dns at the address dnsfence listens on; the host unit passes
`systemd-analyze verify`, installs the fence before Docker (Before=
docker.service) with setup as root and serve unprivileged, and the
workload unit requires dnsfence and gates on `dnsfence check`."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("DNSFENCE_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.environ.get("DNSFENCE_BIN")
D = os.path.join(SRC, "contrib", "forward")


def fail(msg):
    print("FAIL test_forward_examples: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def unit_lines(path, section):
    out, cur = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                cur = line
            elif cur == section and line and not line.startswith("#"):
                out.append(line)
    return out


def main():
    with open(os.path.join(D, "dnsfence.json")) as f:
        cfg = json.load(f)
    check(cfg.get("scope") == "forward", "the config's scope must be forward")
    check(cfg.get("interfaces") == ["br-fenced"], "the config must fence br-fenced")
    gw = cfg["listen"][0].rsplit(":", 1)[0]
    if BIN:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DNSFENCE_")}
        p = subprocess.run([BIN, "-c", os.path.join(D, "dnsfence.json"), "validate"],
                           capture_output=True, text=True, env=env)
        check(p.returncode == 0, "contrib/forward/dnsfence.json does not validate: " + p.stderr)
        check(json.loads(p.stdout)["scope"] == "forward", "validate does not print scope forward")
    print("ok   contrib/forward/dnsfence.json validates: scope forward on br-fenced, listen %s" % gw)

    with open(os.path.join(D, "compose.yaml")) as f:
        text = f.read()
    compose = yaml.safe_load(text)
    nets = compose.get("networks") or {}
    check(nets and all((n or {}).get("external") is True for n in nets.values()),
          "every network must be external (created once dnsfence is up)")
    check("com.docker.network.bridge.name=br-fenced" in text and "--gateway %s" % gw in text,
          "the compose file must show how to create br-fenced with gateway %s" % gw)
    for name, svc in compose["services"].items():
        check(svc.get("dns") == [gw], "%s: dns must be [%s], dnsfence's listen address" % (name, gw))
        check(set(svc.get("networks") or []) <= set(nets), "%s joins a network not external" % name)
        check("network_mode" not in svc, "%s: network_mode would leave the fenced bridge" % name)
    print("ok   compose.yaml: external network only, dns %s" % gw)

    unit = os.path.join(D, "dnsfence-forward.service")
    u, s = unit_lines(unit, "[Unit]"), unit_lines(unit, "[Service]")
    check("Before=docker.service" in u, "the host unit must start before docker.service")
    check("ExecStartPre=+/usr/sbin/dnsfence -c /etc/dnsfence/forward.json setup" in s, "setup as root")
    check("ExecStart=/usr/sbin/dnsfence -c /etc/dnsfence/forward.json serve" in s, "serve")
    check("User=dnsfence" in s and "Restart=on-failure" in s, "User=dnsfence and Restart=on-failure")
    check(not any("teardown" in line for line in s), "stopping must not tear the fence down")
    w = os.path.join(D, "fenced-workload.service")
    wu, ws = unit_lines(w, "[Unit]"), unit_lines(w, "[Service]")
    check(any(l.startswith("Requires=") and "dnsfence-forward.service" in l for l in wu), "workload Requires=")
    check(any(l.startswith("After=") and "dnsfence-forward.service" in l for l in wu), "workload After=")
    check("ExecStartPre=/usr/sbin/dnsfence -c /etc/dnsfence/forward.json check" in ws, "workload gate")
    if BIN and shutil.which("systemd-analyze"):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "dnsfence-forward.service")
            with open(unit) as f, open(path, "w") as g:
                g.write(f.read().replace("/usr/sbin/dnsfence", BIN))
            p = subprocess.run(["systemd-analyze", "verify", "--man=no", path],
                               capture_output=True, text=True)
            out = "\n".join(l for l in (p.stdout + p.stderr).splitlines()
                            if "docker.service" not in l)
            check(not out.strip(), "systemd-analyze verify printed: " + out)
        print("ok   dnsfence-forward.service passes systemd-analyze verify")
    print("ok   units: fence before Docker, setup as root, no teardown on stop; workload requires and gates")


main()
