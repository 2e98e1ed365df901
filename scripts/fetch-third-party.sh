#!/usr/bin/env bash
# Fetches the tree-sitter runtime and grammars named in scripts/third-party.lock with `npm pack`,
# checks each tarball against its pinned sha512 integrity, and unpacks it under third_party/.
# Idempotent: a package already unpacked at the pinned version is left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/third_party"
mkdir -p "$dest/.tarballs"
while read -r spec integrity; do
  case "$spec" in ''|'#'*) continue ;; esac
  name=${spec%@*}
  dir="$dest/$name"
  if [ -f "$dir/.pinned" ] && [ "$(cat "$dir/.pinned")" = "$spec $integrity" ]; then continue; fi
  tgz=$(cd "$dest/.tarballs" && npm pack --silent "$spec" 2>/dev/null | tail -n 1)
  [ -n "$tgz" ] && [ -f "$dest/.tarballs/$tgz" ] || { echo "fetch-third-party: npm pack $spec failed" >&2; exit 1; }
  actual="sha512-$(openssl dgst -sha512 -binary "$dest/.tarballs/$tgz" | base64 -w0)"
  if [ "$actual" != "$integrity" ]; then
    echo "fetch-third-party: integrity mismatch for $spec: got $actual" >&2; exit 1
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  tar -xzf "$dest/.tarballs/$tgz" -C "$dir" --strip-components=1
  echo "$spec $integrity" > "$dir/.pinned"
  echo "fetch-third-party: $spec ok"
done < "$root/scripts/third-party.lock"
