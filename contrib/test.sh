#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the dependencies, build, and run the whole test suite (unit,
# fuzz corpus replay, end-to-end in network namespaces). Run as root.
# BUILD_DIR and CMAKE_ARGS may be set to build a variant (e.g. sanitizers),
# CTEST_ARGS to select tests (CI: -LE "flood|slow" under the sanitizers).
# The tests run DNSFENCE_TEST_JOBS at a time (default twice the cores:
# most end-to-end tests wait on timers and servers, each in namespaces
# of its own; the floods one at a time, the one that must lose nothing
# alone). More is slower on 2 cores: 5 at a time took 439 s and 777 s
# of CPU, 4 at a time 414 s and 670 s.
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/deps.sh
build=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDNSFENCE_WERROR=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure -j"${DNSFENCE_TEST_JOBS:-$(($(nproc) * 2))}" ${CTEST_ARGS:-}
