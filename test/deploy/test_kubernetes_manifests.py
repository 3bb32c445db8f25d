#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""contrib/kubernetes/*.yaml parse and have the shape docs/deployment.md
describes: a ConfigMap whose dnsfence.json `dnsfence validate` accepts and
that keeps *.svc.cluster.local working; an init container running setup as
uid 0 with drop ALL + NET_ADMIN (+ NET_RAW); a native sidecar
(restartPolicy: Always) running serve as uid 0 with drop ALL + exactly
NET_ADMIN, NET_BIND_SERVICE, SETUID, SETGID, NET_RAW and a startupProbe
that runs `dnsfence probe`; app containers that are non-root, cannot
escalate and drop ALL; the dnsfence containers under seccompProfile
RuntimeDefault, resources on every container, JSON logs and metrics on
the sidecar's declared port with the prometheus.io scrape annotations; dnsPolicy None with 127.0.0.1 and the cluster search
domains; a namespace at the privileged Pod Security level."""
import json
import os
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ.get("DNSFENCE_SRC") or os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.environ.get("DNSFENCE_BIN")
KDIR = os.path.join(SRC, "contrib", "kubernetes")

SIDECAR_CAPS = {"NET_ADMIN", "NET_BIND_SERVICE", "SETUID", "SETGID", "NET_RAW"}
SETUP_CAPS_REQUIRED = {"NET_ADMIN"}
SETUP_CAPS_ALLOWED = {"NET_ADMIN", "NET_RAW"}


def fail(msg):
    print("FAIL test_kubernetes_manifests: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def load(name):
    with open(os.path.join(KDIR, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def caps(c):
    sc = c.get("securityContext") or {}
    cp = sc.get("capabilities") or {}
    return sc, set(cp.get("drop") or []), set(cp.get("add") or [])


def is_dnsfence_cmd(c, cmd):
    argv = (c.get("command") or []) + (c.get("args") or [])
    return bool(argv) and argv[-1] == cmd


def main():
    docs = load("dnsfence.yaml")
    kinds = {d["kind"]: d for d in docs}
    check(set(kinds) == {"ConfigMap", "Deployment"}, "expected a ConfigMap and a Deployment, saw %s" % sorted(kinds))

    # The ConfigMap: valid for this very binary, deny-all plus the cluster.
    raw = kinds["ConfigMap"]["data"]["dnsfence.json"]
    conf = json.loads(raw)
    if BIN:
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(raw)
            f.flush()
            env = {k: v for k, v in os.environ.items() if not k.startswith("DNSFENCE_")}
            p = subprocess.run([BIN, "-c", f.name, "validate"], capture_output=True, text=True, env=env)
            check(p.returncode == 0, "dnsfence validate rejects the ConfigMap: " + p.stderr)
            norm = json.loads(p.stdout)
            check("127.0.0.1:53" in norm["listen"], "the config does not listen on 127.0.0.1:53")
    check("upstreams" in conf, "the ConfigMap must name the cluster DNS as upstream (the pod's resolv.conf is dnsfence)")
    check("kubernetes" in conf.get("ecosystems", []) or "*.svc.cluster.local" in conf.get("allow", []),
          "*.svc.cluster.local is not allowed (ecosystems: kubernetes)")
    check(conf.get("deny_rcode", "nxdomain") == "nxdomain", "deny_rcode must stay nxdomain (search lists)")
    check(str(conf.get("user", "")).isdigit() and int(conf["user"]) > 0,
          "user should be a numeric non-zero uid (images may have no passwd entry)")
    print("ok   ConfigMap validates; upstream %s; kubernetes preset; user %s" % (conf["upstreams"], conf["user"]))

    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    check(pod.get("dnsPolicy") == "None", "dnsPolicy must be None")
    dc = pod.get("dnsConfig") or {}
    check(dc.get("nameservers") == ["127.0.0.1"], "dnsConfig.nameservers must be [127.0.0.1]")
    searches = dc.get("searches") or []
    check("svc.cluster.local" in searches and "cluster.local" in searches
          and any(s.endswith(".svc.cluster.local") for s in searches),
          "dnsConfig.searches must be the cluster's (NS.svc.cluster.local, svc.cluster.local, cluster.local)")
    print("ok   dnsPolicy None, nameserver 127.0.0.1, searches %s" % searches)

    inits = pod.get("initContainers") or []
    check(len(inits) == 2, "expected two initContainers (setup, sidecar)")
    setup, side = inits
    check(is_dnsfence_cmd(setup, "setup") and "restartPolicy" not in setup, "the first init container must run setup and exit")
    sc, drop, add = caps(setup)
    check(sc.get("runAsUser") == 0, "setup must run as uid 0")
    check(drop == {"ALL"}, "setup must drop ALL")
    check(SETUP_CAPS_REQUIRED <= add <= SETUP_CAPS_ALLOWED, "setup adds %s, expected NET_ADMIN (+NET_RAW)" % sorted(add))
    print("ok   init container: setup, uid 0, drop ALL, add %s" % sorted(add))

    check(is_dnsfence_cmd(side, "serve"), "the second init container must run serve")
    check(side.get("restartPolicy") == "Always", "the sidecar must be native (restartPolicy: Always)")
    sc, drop, add = caps(side)
    check(sc.get("runAsUser") == 0, "the sidecar starts as uid 0 and drops itself")
    check(drop == {"ALL"} and add == SIDECAR_CAPS, "sidecar caps: drop %s add %s, expected drop ALL add %s"
          % (sorted(drop), sorted(add), sorted(SIDECAR_CAPS)))
    check(sc.get("allowPrivilegeEscalation") is False, "the sidecar must set allowPrivilegeEscalation: false")
    probe = ((side.get("startupProbe") or {}).get("exec") or {}).get("command") or []
    check(probe and probe[0].endswith("dnsfence") and probe[-1] == "probe",
          "the sidecar's startupProbe must run 'dnsfence probe' (passes only when DNS answers)")
    vm = {v["mountPath"]: v["name"] for v in side.get("volumeMounts", [])}
    check(vm.get("/etc/dnsfence") == "dnsfence-config", "the sidecar must mount the ConfigMap at /etc/dnsfence")
    print("ok   sidecar: native, serve, uid 0, drop ALL, add %s, startupProbe %s" % (sorted(add), " ".join(probe)))

    apps = pod.get("containers") or []
    check(apps, "no app container")
    for c in apps:
        sc, drop, add = caps(c)
        check(sc.get("runAsNonRoot") is True, "%s: runAsNonRoot must be true" % c["name"])
        check(sc.get("runAsUser", 1) != 0, "%s: must not run as uid 0" % c["name"])
        check(sc.get("allowPrivilegeEscalation") is False, "%s: allowPrivilegeEscalation must be false" % c["name"])
        check(drop == {"ALL"} and not add, "%s: must drop ALL and add nothing" % c["name"])
    print("ok   app containers %s: non-root, no escalation, no capabilities" % [c["name"] for c in apps])

    # What operators look at: metrics scraped, JSON logs, seccomp, resources.
    check(conf.get("log", {}).get("format") == "json", "the ConfigMap should log JSON lines (log.format)")
    mport = conf.get("metrics", "").rpartition(":")[2]
    check(mport.isdigit(), "the ConfigMap does not turn metrics on")
    ann = kinds["Deployment"]["spec"]["template"]["metadata"].get("annotations") or {}
    check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == mport
          and ann.get("prometheus.io/path") == "/metrics",
          "the pod lacks prometheus.io scrape annotations for port %s: %s" % (mport, ann))
    check(any(str(p.get("containerPort")) == mport for p in side.get("ports") or []),
          "the sidecar does not declare the metrics port %s" % mport)
    for c in (setup, side):
        prof = (c.get("securityContext") or {}).get("seccompProfile") or {}
        check(prof.get("type") == "RuntimeDefault", "%s: seccompProfile must be RuntimeDefault" % c["name"])
    for c in inits + apps:
        res = c.get("resources") or {}
        check(res.get("requests") and (res.get("limits") or {}).get("memory"),
              "%s: no resources (requests and a memory limit)" % c["name"])
    print("ok   metrics on :%s with scrape annotations, JSON logs, RuntimeDefault seccomp, resources everywhere" % mport)

    ns = load("namespace.yaml")[0]
    check(ns["kind"] == "Namespace", "namespace.yaml holds no Namespace")
    check(ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged",
          "the namespace must enforce the privileged Pod Security level")
    print("ok   namespace enforces Pod Security level privileged")


if __name__ == "__main__":
    main()
