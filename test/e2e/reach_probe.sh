#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reach_probe.sh TAG DENIED: what this process is and reaches, one item a
# line, written to TAG beside this script (atomically, so a reader that
# sees the file sees all of it): identity, capabilities, no_new_privs,
# whether www.allowed.test resolves and 198.18.1.10:80 connects, whether
# DENIED resolves and 198.18.3.1:80 (nobody's answer) connects, "done".
# Copied next to the reports by test_docker_entrypoint_subjects.sh and
# real_paths.sh (inside a container), run there as the uids under test.
tag=$1 denied=$2 dir=$(dirname "$0")
{
	echo "uid $(id -u) gid $(id -g) groups $(id -G)"
	awk '/^(CapEff|CapBnd|NoNewPrivs):/ { print $1, $2 }' /proc/self/status
	if getent ahosts www.allowed.test >/dev/null 2>&1; then echo allowed-resolves; fi
	if timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.10/80' 2>/dev/null; then echo allowed-connects; fi
	if getent ahosts "$denied" >/dev/null 2>&1; then echo denied-resolves; fi
	if timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.3.1/80' 2>/dev/null; then echo unresolved-connects; fi
	echo done
} >"$dir/$tag.new" 2>&1
mv "$dir/$tag.new" "$dir/$tag"
