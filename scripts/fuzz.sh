#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (needs clang): builds tests/fuzz/* with
# -fsanitize=fuzzer,address,undefined into build-fuzz/ and runs each target for SECONDS (60).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPILOTFISH_FUZZ=ON -DPILOTFISH_TESTS=OFF -DPILOTFISH_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_chunker fuzz_ignore_query fuzz_chat_request fuzz_mattermost_frame fuzz_shell_command
for target in fuzz_chunker fuzz_ignore_query fuzz_chat_request fuzz_mattermost_frame fuzz_shell_command; do
  mkdir -p "$build/corpus-$target" "$build/artifacts-$target"
  # Crashes and slow inputs go to build-fuzz/artifacts-*/, not the current directory.
  "$build/$target" -max_total_time="$seconds" -max_len=65536 \
    -artifact_prefix="$build/artifacts-$target/" "$build/corpus-$target"
done
