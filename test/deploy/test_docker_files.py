#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""contrib/docker: no Docker engine runs in CI, so the files are checked by
reading them. compose.yaml parses, the app joins the sidecar's network
namespace (network_mode: "service:dnsfence"), waits for its healthcheck
(dnsfence-healthcheck: resolv.conf switched, dnsfence probe), runs as a non-root user with cap_drop ALL and
no-new-privileges; the sidecar adds only the capabilities dnsfence needs.
The Dockerfile is Debian slim, installs the binary, the default config and
the entrypoint root-owned, and uses the entrypoint; the configs validate;
the entrypoint is a POSIX shell script that `sh -n` accepts."""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("DNSFENCE_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.environ.get("DNSFENCE_BIN")
D = os.path.join(SRC, "contrib", "docker")
SIDECAR_OK = {"NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE", "SETUID", "SETGID"}


def fail(msg):
    print("FAIL test_docker_files: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def validate(path):
    if not BIN:
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNSFENCE_")}
    p = subprocess.run([BIN, "-c", path, "validate"], capture_output=True, text=True, env=env)
    check(p.returncode == 0, "%s does not validate: %s" % (path, p.stderr))


def main():
    with open(os.path.join(D, "compose.yaml")) as f:
        compose = yaml.safe_load(f)
    svc = compose["services"]
    check("dnsfence" in svc and "app" in svc, "expected services dnsfence and app")
    side, app = svc["dnsfence"], svc["app"]
    check(app.get("network_mode") == "service:dnsfence", "app must use network_mode: service:dnsfence")
    check((app.get("depends_on") or {}).get("dnsfence", {}).get("condition") == "service_healthy",
          "app must wait for the sidecar's healthcheck")
    hc = (side.get("healthcheck") or {}).get("test") or []
    check(hc and hc[-1] == "/usr/local/bin/dnsfence-healthcheck",
          "the sidecar's healthcheck must be dnsfence-healthcheck (resolv.conf switched, probe answers)")
    # Docker mounts /etc/resolv.conf read-only in a read-only container:
    # the entrypoint could not point it at dnsfence (issue 14, bug 1).
    check(not side.get("read_only"), "the sidecar must not be read_only: its entrypoint rewrites /etc/resolv.conf")
    user = str(app.get("user", ""))
    check(user and not user.startswith("0") and user.split(":")[0] != "root", "app must run as a non-root user")
    check(app.get("cap_drop") == ["ALL"] and not app.get("cap_add"), "app must drop ALL and add nothing")
    check("no-new-privileges:true" in (app.get("security_opt") or []), "app must set no-new-privileges")
    check(set(side.get("cap_add") or []) <= SIDECAR_OK and "NET_ADMIN" in side.get("cap_add", []),
          "sidecar capabilities: %s" % side.get("cap_add"))
    print("ok   compose.yaml: app in service:dnsfence's namespace, waits for the probe, non-root, no capabilities")

    with open(os.path.join(D, "Dockerfile")) as f:
        df = f.read()
    froms = re.findall(r"^FROM\s+(\S+)", df, re.M)
    check(froms and froms[-1].startswith("debian:") and "slim" in froms[-1], "the image must be Debian slim: %s" % froms)
    copies = re.findall(r"^COPY\s+(.*)$", df, re.M)
    for dest in ("/usr/sbin/dnsfence", "/usr/local/bin/dnsfence-entrypoint", "/usr/local/bin/dnsfence-healthcheck",
                 "/usr/local/bin/dnsfence-entrypoint-subjects", "/usr/local/lib/dnsfence/entrypoint-lib.sh",
                 "/etc/dnsfence/dnsfence.json"):
        line = [c for c in copies if c.rstrip().endswith(dest)]
        check(line, "the Dockerfile does not install %s" % dest)
        check("--chown=root:root" in line[0], "%s must be root-owned in the image" % dest)
    check(re.search(r'^ENTRYPOINT \["/usr/local/bin/dnsfence-entrypoint"\]', df, re.M), "ENTRYPOINT must be the entrypoint")
    check(re.search(r'^\s*CMD \["/usr/local/bin/dnsfence-healthcheck"\]', df, re.M), "HEALTHCHECK must be dnsfence-healthcheck")
    # A "# syntax=" line makes BuildKit pull a frontend image: no offline
    # or mirrored builds (issue 14, bug 5).
    check(not re.search(r"^#\s*syntax\s*=", df, re.M | re.I), "the Dockerfile must not name a BuildKit frontend (# syntax=)")
    # Every source from the build context (not --from= a stage) exists:
    # a tree moved under src/ must not leave a COPY of a gone folder.
    for c in copies:
        if "--from=" in c:
            continue
        for src in [w for w in c.split() if not w.startswith("--")][:-1]:
            check(os.path.exists(os.path.join(SRC, src)), "the Dockerfile copies %s, which does not exist" % src)
    print("ok   Dockerfile: %s, binary, config and entrypoint root-owned" % froms[-1])

    validate(os.path.join(SRC, "contrib", "dnsfence.json"))
    validate(os.path.join(D, "dnsfence.json"))
    for name in ("entrypoint.sh", "entrypoint-subjects.sh"):
        ep = os.path.join(D, name)
        check(os.access(ep, os.X_OK), "%s is not executable" % name)
        p = subprocess.run(["sh", "-n", ep], capture_output=True, text=True)
        check(p.returncode == 0, "sh -n %s: %s" % (name, p.stderr))
    p = subprocess.run(["sh", "-n", os.path.join(D, "entrypoint-lib.sh")], capture_output=True, text=True)
    check(p.returncode == 0, "sh -n entrypoint-lib.sh: " + p.stderr)
    hcs = os.path.join(D, "healthcheck.sh")
    check(os.access(hcs, os.X_OK), "healthcheck.sh is not executable")
    p = subprocess.run(["sh", "-n", hcs], capture_output=True, text=True)
    check(p.returncode == 0, "sh -n healthcheck.sh: " + p.stderr)
    print("ok   default and compose configs validate; entrypoint.sh, entrypoint-subjects.sh and entrypoint-lib.sh parse")


if __name__ == "__main__":
    main()
