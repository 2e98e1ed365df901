#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the dependencies, builds,
# runs every test, then builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs
# every test under them. Exits non-zero on the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh --test

echo "== build (Release) and test"
bash scripts/build.sh
(cd build && ctest --output-on-failure -j2 --timeout 900)

if [ "${PILOTFISH_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (ASan+UBSan) and test"
  PILOTFISH_BUILD_DIR="$root/build-asan" bash scripts/build.sh \
    -DCMAKE_BUILD_TYPE=Debug -DPILOTFISH_SANITIZE=ON -DPILOTFISH_BENCH=OFF
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && ctest --output-on-failure -j2 --timeout 1800)
fi
