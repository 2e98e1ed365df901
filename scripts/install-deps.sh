#!/usr/bin/env bash
# Installs everything pilotfish needs to build and test on Debian 12, as root.
# Debian packages come from the Debian 12 (bookworm) archive; npm packages are pinned with
# integrity in scripts/third-party.lock and fetched by scripts/fetch-third-party.sh.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake git ca-certificates openssl python3
  libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libboost-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  ripgrep
)
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
