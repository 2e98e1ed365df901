#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the dependencies, builds,
# runs every test (the fuzz targets among them: each over its seeds and their mutations,
# tests/fuzz/run_inputs.cpp), then builds again with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs every test under them. PILOTFISH_FUZZ_BUILD=1 also builds the targets as libFuzzer
# programs with clang (scripts/fuzz.sh --build-only; 7 minutes on 2 cores, so not by default).
# Exits non-zero on the first failure. Compiled objects and llama.cpp are cached outside the
# clone (scripts/cache-dir.sh), so a machine that built pilotfish before rebuilds only what
# changed; a hung test is stopped at its ctest timeout (tests/CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh --test
start=$SECONDS
stage() { echo "== $1 ($((SECONDS - start)) s so far)"; }

stage "build (Release) and test"
bash scripts/build.sh
(cd build && ctest --output-on-failure -j2)

if [ "${PILOTFISH_FUZZ_BUILD:-0}" = 1 ]; then
  stage "build the libFuzzer targets (clang)"
  bash scripts/fuzz.sh --build-only
fi

if [ "${PILOTFISH_SKIP_SANITIZERS:-0}" != 1 ]; then
  stage "build (ASan+UBSan) and test"
  # Debug (-O0): at -O1 GCC 12 raises false -Wmaybe-uninitialized and -Wmismatched-new-delete
  # in libstdc++'s regex and Asio's coroutine frames, which -Werror turns into a failed build.
  PILOTFISH_BUILD_DIR="$root/build-asan" bash scripts/build.sh \
    -DCMAKE_BUILD_TYPE=Debug -DPILOTFISH_SANITIZE=ON -DPILOTFISH_BENCH=OFF
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The no_cpp tests (the test servers' checks against the real client libraries) run no
  # pilotfish code: the Release stage ran them.
  (cd build-asan && ctest --output-on-failure -j2 -LE no_cpp)
fi
stage "done"
