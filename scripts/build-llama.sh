#!/usr/bin/env bash
# Builds llama.cpp for pilotfish's local models: the git bundle inside the pinned npm package
# node-llama-cpp (third_party/node-llama-cpp, fetched by fetch-third-party.sh) is cloned into
# a cache folder outside the clone (scripts/cache-dir.sh: /var/cache/pilotfish/llama.cpp-<key>,
# the key naming the pinned package and the compiler) and built once there as static libraries (llama, ggml, CPU backend, portable:
# no -march=native; common for the chat templates' tool calls) plus llama-server, the reference the tests compare the in-process embeddings
# with. third_party/llama.cpp is a link to it, so a fresh clone on a machine that built this pin
# before reuses it. About 5 minutes on 2 cores the first time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pkg="$root/third_party/node-llama-cpp"
link="$root/third_party/llama.cpp"
[ -f "$pkg/llama/gitRelease.bundle" ] || "$root/scripts/fetch-third-party.sh"
want="$(cat "$pkg/.pinned") $(cc --version | head -n 1)"
. "$root/scripts/cache-dir.sh"
src="$(pf_cache_dir)/llama.cpp-$(printf '%s' "$want" | sha256sum | cut -c1-16)"
build="$src/build"
if [ "$(readlink "$link" 2>/dev/null)" != "$src" ]; then rm -rf "$link"; ln -s "$src" "$link"; fi
if [ -f "$build/.built" ] && [ "$(cat "$build/.built")" = "$want" ]; then exit 0; fi
rm -rf "$src"
git clone -q "$pkg/llama/gitRelease.bundle" "$src" 2>/dev/null
echo "build-llama: building llama.cpp $(cat "$pkg/llama/llama.cpp.info.json" | tr -d ' \n') (once)"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_HTML=OFF \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target llama ggml llama-common llama-server >/dev/null
echo "$want" > "$build/.built"
