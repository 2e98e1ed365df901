#!/usr/bin/env bash
# The PostgreSQL store beside the SQLite one, on the same corpus in the same run (issue 13):
# index throughput (a full `pilotfish index` into each) and lexical search latency (the same
# queries through bench/pf_search_latency on each), with PostgreSQL's figures as a ratio of
# SQLite's. A PostgreSQL 15 server is started here as the tests start theirs (initdb in a
# temporary folder, a unix socket only), and removed at the end.
#
# usage: bench/store_backends.sh [--corpus DIR] [--max-lines N] [--build DIR]
#   --corpus     default corpus/large (bench/fetch-large-corpus.sh fetches it)
#   --max-lines  chunk size passed to `pilotfish index` (default 40: over 100k chunks on it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
corpus=$root/corpus/large max_lines=40 build=$root/build
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus=$2; shift 2 ;;
    --max-lines) max_lines=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--corpus DIR] [--max-lines N] [--build DIR]" >&2; exit 2 ;;
  esac
done
[ -d "$corpus" ] || bash "$here/fetch-large-corpus.sh" "$corpus"
bin=$build/pilotfish latency=$build/bench/pf_search_latency
[ -x "$bin" ] && [ -x "$latency" ] || { echo "build pilotfish and bench/pf_search_latency first" >&2; exit 1; }
work=$(mktemp -d /tmp/pf-bench-stores.XXXXXX)
source "$here/pg.sh"
cleanup() { stop_postgres "$work"; rm -rf "$work"; }
trap cleanup EXIT
# Durable commits, as a production server runs (fsync on), shared_buffers raised from 128 MB.
start_postgres "$work" -c shared_buffers=512MB
sqlite_db=$work/sqlite/index.db
mkdir -p "$work/sqlite"

index() {  # prints: seconds chunks MB
  local db=$1 t0 t1
  t0=$(date +%s.%N)
  "$bin" index "$corpus" --db "$db" --max-lines "$max_lines" --json > "$work/index.json"
  t1=$(date +%s.%N)
  python3 -c "import json,sys; r=json.load(open('$work/index.json')); print('%.1f %d %.1f' % ($t1-$t0, r['chunks'], r['bytes']/1e6))"
}
read -r s_sec s_chunks s_mb <<<"$(index "$sqlite_db")"
read -r p_sec p_chunks p_mb <<<"$(index "$pg_url")"

# Queries: the shared eval's 50 questions and 150 identifiers declared in the corpus.
{
  python3 -c "import json; [print(json.loads(l)['question']) for l in open('$root/../shared/eval/undici-questions.jsonl')]"
  sqlite3 "$sqlite_db" "SELECT DISTINCT symbol FROM copilot_code_chunks WHERE length(symbol) > 5 ORDER BY chunk_id % 997, symbol LIMIT 150"
} > "$work/queries.txt"
s_lat=$("$latency" "$sqlite_db" "$work/queries.txt" --repeat 3)
p_lat=$("$latency" "$pg_url" "$work/queries.txt" --repeat 3)

python3 - "$s_sec" "$s_chunks" "$s_mb" "$p_sec" "$p_chunks" "$p_mb" "$s_lat" "$p_lat" <<'PY'
import json, sys
s_sec, s_chunks, s_mb, p_sec, p_chunks, p_mb = map(float, sys.argv[1:7])
s, p = json.loads(sys.argv[7]), json.loads(sys.argv[8])
print(f"corpus: {int(s_chunks)} chunks (SQLite), {int(p_chunks)} (PostgreSQL)")
print(f"{'':28}{'SQLite':>12}{'PostgreSQL':>12}{'PG / SQLite':>13}")
print(f"{'index, s':28}{s_sec:12.1f}{p_sec:12.1f}{p_sec / s_sec:12.2f}x")
print(f"{'index, chunks/s':28}{s_chunks / s_sec:12.0f}{p_chunks / p_sec:12.0f}{(p_chunks / p_sec) / (s_chunks / s_sec):12.2f}x")
for k in ("open_ms", "p50_ms", "p90_ms", "p99_ms", "mean_ms"):
    print(f"{'search ' + k:28}{s[k]:12.3f}{p[k]:12.3f}{p[k] / s[k]:12.2f}x")
print(f"same hits on the first pass: {s['hits_first_pass'] == p['hits_first_pass']} "
      f"({s['hits_first_pass']} / {p['hits_first_pass']}), queries {s['queries']}")
PY
