#!/usr/bin/env bash
# Fetches the large benchmark corpus: real npm packages at pinned versions, each tarball checked
# against the sha512 integrity hard-coded below (from `npm view PKG@VER dist.integrity`), and
# unpacked into DEST/<name> (scoped names: "@angular/core" -> DEST/angular__core).
#
# Usage: bench/fetch-large-corpus.sh [DEST]   (default: <repo>/corpus/large, git-ignored)
#
# Idempotent: a package whose unpacked directory is stamped with the expected integrity is left
# alone; tarballs are cached next to DEST (DEST.tarballs/) so that the stamp and the tarballs are
# not part of the indexed tree.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:-$here/../corpus/large}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
cache="${dest%/}.tarballs"
mkdir -p "$cache"

# name@version  sha512 integrity (SRI form)
PACKAGES=(
  "typescript@5.4.5 sha512-vcI4UpRgg81oIRUFwR0WSIHKt11nJ7SAVlYNIu+QpqeyXP+gpQJy/Z4+F0aGxSE4MqwjyXvW/TzgkLAx2AGHwQ=="
  "rxjs@7.8.1 sha512-AA3TVj+0A2iuIoQkWEK/tqFjBq2j+6PO6Y0zJcvzLAFhEFIO3HL0vls9hWLncZbAAbK0mar7oZ4V079I/qPMxg=="
  "typeorm@0.3.20 sha512-sJ0T08dV5eoZroaq9uPKBoNcGslHBR4E4y+EBHs//SiGbblGe7IeduP/IH4ddCcj0qp3PHwDwGnuvqEAnKlq/Q=="
  "@angular/core@17.3.12 sha512-MuFt5yKi161JmauUta4Dh0m8ofwoq6Ino+KoOtkYMBGsSx+A7dSm+DUxxNwdj7+DNyg3LjVGCFgBFnq4g8z06A=="
  "lodash@4.17.21 sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="
  "@types/node@20.12.7 sha512-wq0cICSkRLVaf3UGLMGItu/PtdY7oaXaI/RVU+xliKVOtRna3PRY57ZDfztpDL0n11vfymMUnXv8QwYCO7L1wg=="
  "three@0.160.0 sha512-DLU8lc0zNIPkM7rH5/e1Ks1Z8tWCGRq6g8mPowdDJpw1CFBJMU7UoJjC6PefXW7z//SSl0b2+GCw14LB+uDhng=="
  "webpack@5.91.0 sha512-rzVwlLeBWHJbmgTC/8TvAcu5vpJNII+MelQpylD4jNERPwpBJOE2lEcko1zJX3QJeLjTTAnQxn/OJ8bjDzVQaw=="
  "date-fns@3.6.0 sha512-fRHTG8g/Gif+kSh50gaGEdToemgfj74aRX3swtiouboip5JDLAyDE9F11nHMIcvOaXeOC6D7SpNhi7uFyB7Uww=="
  "mongoose@8.3.4 sha512-ckBaBzKgtWgCalW/LPkcBsR3wKCOYEJ9jLFPmYCYV7TLStpETY757ELx8/1stL11+6HxLLVffawBffXzd0Y7YA=="
  "sequelize@6.37.3 sha512-V2FTqYpdZjPy3VQrZvjTPnOoLm0KudCRXfGWp48QwhyPPp2yW8z0p0sCYZd/em847Tl2dVxJJ1DR+hF+O77T7A=="
  "antd@5.17.0 sha512-jrzMIcaTJIy12/GJ2PfgchgZGuAlDodlaOKd05/TxEtFilRHnv8oaf0qfqNGG3slvvuy4J/57xn21jM4cLl7Hw=="
  "aws-cdk-lib@2.140.0 sha512-wepu+u63LTxnIfW/IPr+V5Mx1T9jq8HRxhPynYPQKFYaKfOV+6HtJGxkuAEg2CWXk0rx2Btal/BCLjYQovI92Q=="
)

sri_of() {  # sha512 SRI string of a file
  printf 'sha512-%s' "$(openssl dgst -sha512 -binary "$1" | base64 -w0)"
}

for entry in "${PACKAGES[@]}"; do
  spec="${entry%% *}"
  want="${entry#* }"
  name="${spec%@*}"
  version="${spec##*@}"
  dir_name="${name#@}"
  dir_name="${dir_name//\//__}"
  out="$dest/$dir_name"
  stamp="$cache/$dir_name.ok"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$spec $want" && -d "$out" ]]; then
    echo "ok       $spec (already unpacked)"
    continue
  fi
  tgz="$cache/${dir_name}-${version}.tgz"
  if [[ ! -f "$tgz" || "$(sri_of "$tgz")" != "$want" ]]; then
    echo "fetch    $spec"
    tmp="$(mktemp -d "$cache/pack.XXXXXX")"
    (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
    mv "$tmp"/*.tgz "$tgz"
    rmdir "$tmp"
  fi
  got="$(sri_of "$tgz")"
  if [[ "$got" != "$want" ]]; then
    echo "error: integrity mismatch for $spec" >&2
    echo "  expected $want" >&2
    echo "  got      $got" >&2
    rm -f "$tgz"
    exit 1
  fi
  rm -rf "$out" "$out.tmp"
  mkdir -p "$out.tmp"
  tar -xzf "$tgz" -C "$out.tmp" --strip-components=1 --no-same-owner
  mv "$out.tmp" "$out"
  printf '%s %s' "$spec" "$want" > "$stamp"
  echo "unpacked $spec -> $out"
done

# Summary: everything on disk, and the JS/TS/Markdown part of it.
python3 - "$dest" <<'EOF'
import os, sys
root = sys.argv[1]
n = b = n_src = b_src = 0
for d, _, files in os.walk(root):
    for f in files:
        s = os.lstat(os.path.join(d, f)).st_size
        n += 1; b += s
        if f.endswith((".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".md", ".mdx")):
            n_src += 1; b_src += s
print(f"corpus {root}: {n} files, {b/1e6:.1f} MB; JS/TS/Markdown: {n_src} files, {b_src/1e6:.1f} MB")
EOF
