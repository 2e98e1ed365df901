#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (needs clang): builds tests/fuzz/fuzz_*.cpp with
# -fsanitize=fuzzer,address,undefined into build-fuzz/ and runs each target for SECONDS.
#
#   scripts/fuzz.sh --build-only           build every target, run none (PILOTFISH_FUZZ_BUILD=1 in CI)
#   scripts/fuzz.sh [SECONDS] [TARGET...]   run the targets (default: all) SECONDS each (60)
#
# Each run starts from build-fuzz/corpus-TARGET (kept between runs) plus the committed seeds in
# tests/fuzz/corpus/TARGET; crashes and slow inputs go to build-fuzz/artifacts-TARGET/. One
# process per target, so one core; PILOTFISH_FUZZ_FLAGS adds libFuzzer flags.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PILOTFISH_FUZZ_DIR:-$root/build-fuzz}

build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi
seconds=${1:-60}
[ $# -gt 0 ] && shift
# Every entry point in tests/fuzz/ is a target: one without a CMake target fails the build.
all=$(cd "$root/tests/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//')
targets=${*:-$all}

# The compiler cache, as scripts/build.sh sets it up (its folder outside the clone).
. "$root/scripts/cache-dir.sh"
pf_use_ccache "$root"

# OSS-Fuzz's flags: -O1 with line tables (a crash's stack keeps file:line), quicker to build
# than RelWithDebInfo's -O2 -g.
flags="-O1 -gline-tables-only -DNDEBUG"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
  -DPILOTFISH_FUZZ=ON -DPILOTFISH_TESTS=OFF -DPILOTFISH_BENCH=OFF "${PF_CCACHE_ARGS[@]}" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"${PILOTFISH_FUZZ_JOBS:-$(nproc)}" --target $targets
[ "$build_only" = 1 ] && exit 0

for target in $targets; do
  mkdir -p "$build/corpus-$target" "$build/artifacts-$target"
  seeds=()
  [ -d "$root/tests/fuzz/corpus/$target" ] && seeds=("$root/tests/fuzz/corpus/$target")
  echo "fuzz.sh: $target for $seconds s"
  # shellcheck disable=SC2086
  "$build/$target" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts-$target/" ${PILOTFISH_FUZZ_FLAGS:-} \
    "$build/corpus-$target" "${seeds[@]}"
done
