#!/usr/bin/env bash
# Concurrent chat streams through two `pilotfish serve` replicas on one PostgreSQL store against
# one replica, in the same run, with the same asyncio model server (model_server.py) and load
# generator (load.py, streams round-robin across the replicas as a load balancer would). The
# PostgreSQL 15 server is started here as the tests start theirs (initdb in a temporary folder,
# a unix socket only).
#
# usage: bench/concurrency/replicas.sh [-c C] [-t TOKENS] [-d DELAY_MS] [--fastify]
#   -c  simultaneous streams (default 1000)   -t  tokens per answer (50)   -d  inter-token ms (20)
#   --fastify  answer about the pinned fastify@5.12.8 package, as run.sh --fastify does
# Env: PILOTFISH_BIN (default build/pilotfish); PILOTFISH_SERVE_ARGS, extra `serve` options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
C=1000 TOKENS=50 DELAY=20 FASTIFY=0
while [ $# -gt 0 ]; do
  case "$1" in
    -c) C=$2; shift 2 ;;
    -t) TOKENS=$2; shift 2 ;;
    -d) DELAY=$2; shift 2 ;;
    --fastify) FASTIFY=1; shift ;;
    *) echo "usage: $0 [-c C] [-t TOKENS] [-d DELAY_MS] [--fastify]" >&2; exit 2 ;;
  esac
done
bin=${PILOTFISH_BIN:-$root/build/pilotfish}
[ -x "$bin" ] || { echo "replicas.sh: no pilotfish binary at $bin (set PILOTFISH_BIN)" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need=$((C * 3 + 256))
[ "$(ulimit -n)" -ge "$need" ] || { echo "replicas.sh: ulimit -n is $(ulimit -n), need $need" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pf-bench-replicas.XXXXXX")
source "$here/common.sh"
source "$root/bench/pg.sh"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  stop_postgres "$work"
  rm -rf "$work"
}
trap cleanup EXIT
start_postgres "$work" -c max_connections=200
db=$pg_url

python3 "$here/model_server.py" --tokens "$TOKENS" --delay-ms "$DELAY" > "$work/model.out" 2> "$work/model.out.err" &
pids+=($!)
model_port=$(first_line "$work/model.out" "${pids[-1]}" | awk '{print $2}')

repo=$work/repo
tiny_repo "$repo"
QUESTION="How does greet work?"
if [ "$FASTIFY" = 1 ]; then
  bash "$root/../shared/eval/fetch-corpus.sh" fastify@5.12.8 "$root/corpus/fastify" > /dev/null
  repo=$root/corpus/fastify/package
  QUESTION="How are route handlers registered and when do onRequest hooks run?"
fi
"$bin" index "$repo" --db "$db" > /dev/null

bench_config "$work/config.json" "$model_port"
replica() { # name -> "pid url"
  "$bin" serve --db "$db" --config "$work/config.json" --repo "$repo" --listen 127.0.0.1:0 \
    ${PILOTFISH_SERVE_ARGS:-} > "$work/$1.out" 2> "$work/$1.out.err" &
  local pid=$!
  pids+=("$pid")
  echo "$pid $(first_line "$work/$1.out" "$pid" | sed -n 's/^listening on //p')"
}
read -r a_pid a_url <<<"$(replica a)"
read -r b_pid b_url <<<"$(replica b)"

echo "repository $repo on PostgreSQL 15; question: $QUESTION"
echo "C=$C streams, $TOKENS tokens per answer, ${DELAY} ms between tokens; $(nproc) cores, load average $(cut -d" " -f1-3 /proc/loadavg)"
for u in "$a_url" "$b_url"; do
  python3 "$here/load.py" "$u/v1/platform-copilot/chat" -c 20 --key "$key" --delay-ms "$DELAY" --label warm-up \
    --message "$QUESTION" > /dev/null || true
done
python3 "$here/load.py" "$a_url/v1/platform-copilot/chat" -c "$C" --key "$key" --pid "$a_pid" --delay-ms "$DELAY" \
  --tokens "$TOKENS" --label "one replica" --message "$QUESTION" --json "$work/one.json"
sleep 1
python3 "$here/load.py" "$a_url/v1/platform-copilot/chat" "$b_url/v1/platform-copilot/chat" -c "$C" --key "$key" \
  --pid "$a_pid" --pid "$b_pid" --delay-ms "$DELAY" --tokens "$TOKENS" --label "two replicas" \
  --message "$QUESTION" --json "$work/two.json"

python3 - "$work" <<'PY'
import json, os, sys
one, two = (json.load(open(os.path.join(sys.argv[1], n + ".json"))) for n in ("one", "two"))
f = lambda v, nd=1: "-" if v is None else "{:,.{}f}".format(v, nd)
rows = [("completed / failed", lambda r: "%d / %d" % (r["completed"], r["failed"])),
        ("throughput (streams/s)", lambda r: f(r["streams_per_s"])),
        ("TTFB p50 / p99 (ms)", lambda r: "%s / %s" % (f(r["ttfb_ms_p50"]), f(r["ttfb_ms_p99"]))),
        ("first token p50 / p99 (ms)", lambda r: "%s / %s" % (f(r["first_delta_ms_p50"]), f(r["first_delta_ms_p99"]))),
        ("server CPU, all replicas (s)", lambda r: f(r["server_cpu_s"], 2)),
        ("memory per open stream (KiB)", lambda r: f(r["mem_per_stream_kb"])),
        ("load generator CPU (s)", lambda r: f(r["load_cpu_s"], 2))]
print("\n| | one replica | two replicas |\n|---|---|---|")
for label, fn in rows:
    print("| %s | %s | %s |" % (label, fn(one), fn(two)))
print("\nthroughput ratio two / one replicas: %.2fx" % (two["streams_per_s"] / one["streams_per_s"]))
PY
