#!/usr/bin/env bash
# Retrieval CPU per chat on the fastify index (pinned fastify@5.12.8 from npm, ~1,600 chunks):
# pf_chat_retrieval with the store's in-memory BM25 ranking, then with FTS5 ranking
# (PILOTFISH_LEXICAL_RANKER=fts5) on the same store and questions, and the ratio between them.
#
# usage: bench/chat_retrieval.sh [--repeat N]   (needs a build with PILOTFISH_BENCH=ON)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PILOTFISH_BUILD_DIR:-$root/build}
repeat=200
[ "${1:-}" = "--repeat" ] && repeat=$2
corpus=$root/corpus/fastify
bash "$root/../shared/eval/fetch-corpus.sh" fastify@5.12.8 "$corpus" > /dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/pf-chat-retrieval.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$build/pilotfish" index "$corpus/package" --db "$work/index.db" > /dev/null
cat > "$work/questions.txt" <<'Q'
How are route handlers registered and when do onRequest hooks run?
How does fastify validate the request body with a JSON schema?
Where is the reply serialized and how are content type parsers chosen?
How do plugins get encapsulated with avvio and decorate?
What happens when a handler throws an error, how is the error handler called?
How is the logger configured and what does a request log line contain?
Q
run() { "$build/bench/pf_chat_retrieval" "$work/index.db" "$corpus/package" "$work/questions.txt" --repeat "$repeat"; }
memory=$(run)
fts5=$(PILOTFISH_LEXICAL_RANKER=fts5 run)
echo "in-memory ranking: $memory"
echo "FTS5 ranking:      $fts5"
python3 - "$memory" "$fts5" <<'P'
import json, sys
m, f = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert m["prompt_chars"] == f["prompt_chars"] and m["hits_per_chat"] == f["hits_per_chat"], "the rankings retrieved different chunks"
print("retrieval CPU per chat p50: %.1f us vs %.1f us: %.1fx less (p99 %.1f vs %.1f us)" % (
    m["chat_retrieval_us_p50"], f["chat_retrieval_us_p50"], f["chat_retrieval_us_p50"] / m["chat_retrieval_us_p50"],
    m["chat_retrieval_us_p99"], f["chat_retrieval_us_p99"]))
P
