#!/usr/bin/env bash
# Installs everything pilotfish needs to build on Debian 12, as root; with --test, also what
# only the tests need (Chromium for the chat page's browser tests, clang for the fuzz targets).
# Debian packages come from the Debian 12 (bookworm) archive; npm packages are pinned with
# integrity in scripts/third-party.lock and fetched by scripts/fetch-third-party.sh. lld links
# (CMakeLists.txt, PILOTFISH_LLD).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake ccache git ca-certificates openssl python3
  libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libboost-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev libre2-dev pkg-config
  ripgrep bubblewrap libstemmer-dev libhnswlib-dev libpq-dev postgresql-15 zlib1g-dev libzstd-dev lld
)
# Debian's own Chromium, driven by puppeteer-core (tests/node/web_page.mjs): never a downloaded
# browser. DejaVu gives its screenshots real glyphs. clang and its runtime (libFuzzer, the
# sanitizers) build the libFuzzer targets (scripts/fuzz.sh). systemd-analyze checks the
# unit `pilotfish install-service` writes.
if [ "${1:-}" = "--test" ]; then packages+=(chromium fonts-dejavu-core clang libclang-rt-14-dev systemd); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node.js and npm fetch the pinned grammars; keep an existing install (it may be newer than Debian's).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
"$(dirname "$0")/fetch-third-party.sh"
# The `ai` client versions tests/node/conformance.mjs reads the chat stream with, pinned in
# tests/node/package-lock.json; skipped while node_modules is newer than the lock file.
node_tests="$(cd "$(dirname "$0")/.." && pwd)/tests/node"
if [ ! -f "$node_tests/node_modules/.package-lock.json" ] ||
   [ "$node_tests/package-lock.json" -nt "$node_tests/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$node_tests" --no-audit --no-fund
fi
# The chat page's packages (web/package-lock.json): esbuild bundles them at build time.
web="$(cd "$(dirname "$0")/.." && pwd)/web"
if [ ! -f "$web/node_modules/.package-lock.json" ] ||
   [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$web" --no-audit --no-fund
fi
