#!/usr/bin/env bash
# Concurrent chat streams: pilotfish serve against the reference stack (a Node server on the `ai`
# package, node_server.mjs), side by side in one run, both streaming from the same asyncio model
# server (model_server.py). load.py opens C simultaneous streams against each in turn (first
# directly against the model server: the harness floor) and run.sh prints a table and the ratios.
#
# usage: bench/concurrency/run.sh [-c C] [-t TOKENS] [-d DELAY_MS] [-r ROUNDS] [--json DIR]
#                                 [--fastify] [--question TEXT]
#   -c  simultaneous streams (default 1000)     -t  tokens per answer (default 50)
#   -d  model inter-token delay in ms (20)      -r  streams per connection slot, one after another (1)
#   --json DIR  keep each run's load.py JSON there
#   --fastify   answer about the pinned fastify@5.12.8 package (~1,600 chunks) instead of a
#               three-file repository, with a question that retrieves from it (issue 12's set-up)
#   --question  what every stream asks
# Env: PILOTFISH_BIN (default build/pilotfish); PILOTFISH_SERVE_ARGS, extra `serve` options
# (e.g. "--workers 4"); NODE, the node command (default node).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
C=1000 TOKENS=50 DELAY=20 ROUNDS=1 JSON_DIR= FASTIFY=0 QUESTION=
while [ $# -gt 0 ]; do
  case "$1" in
    -c) C=$2; shift 2 ;;
    -t) TOKENS=$2; shift 2 ;;
    -d) DELAY=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    --json) JSON_DIR=$2; shift 2 ;;
    --fastify) FASTIFY=1; shift ;;
    --question) QUESTION=$2; shift 2 ;;
    *) echo "usage: $0 [-c C] [-t TOKENS] [-d DELAY_MS] [-r ROUNDS] [--json DIR]" >&2; exit 2 ;;
  esac
done
bin=${PILOTFISH_BIN:-$root/build/pilotfish}
node=${NODE:-node}
[ -x "$bin" ] || { echo "run.sh: no pilotfish binary at $bin (set PILOTFISH_BIN)" >&2; exit 1; }

# Each stream holds a socket in load.py, two in the server (client and model) and one in the model.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need=$((C * 2 + 256))
[ "$(ulimit -n)" -ge "$need" ] || { echo "run.sh: ulimit -n is $(ulimit -n), need $need" >&2; exit 1; }

# The reference stack's npm packages (pinned in package-lock.json).
if [ ! -f "$here/node_modules/.package-lock.json" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pf-bench-concurrency.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

source "$here/common.sh"

python3 "$here/model_server.py" --tokens "$TOKENS" --delay-ms "$DELAY" > "$work/model.out" 2> "$work/model.out.err" &
model_pid=$!; pids+=("$model_pid")
model_port=$(first_line "$work/model.out" "$model_pid" | awk '{print $2}')

# A small repository for pilotfish's retrieval and tools.
repo=$work/repo
tiny_repo "$repo"
if [ "$FASTIFY" = 1 ]; then
  bash "$root/../shared/eval/fetch-corpus.sh" fastify@5.12.8 "$root/corpus/fastify" > /dev/null
  repo=$root/corpus/fastify/package
  QUESTION=${QUESTION:-How are route handlers registered and when do onRequest hooks run?}
fi
QUESTION=${QUESTION:-How does greet work?}
"$bin" index "$repo" --db "$work/index.db" > /dev/null

bench_config "$work/config.json" "$model_port"

"$bin" serve --db "$work/index.db" --config "$work/config.json" --repo "$repo" --listen 127.0.0.1:0 \
  ${PILOTFISH_SERVE_ARGS:-} > "$work/pf.out" 2> "$work/pf.out.err" &
pf_pid=$!; pids+=("$pf_pid")
pf_url=$(first_line "$work/pf.out" "$pf_pid" | sed -n 's/^listening on //p')
[ -n "$pf_url" ] || { echo "run.sh: pilotfish serve did not print 'listening on <url>'" >&2; exit 1; }

$node "$here/node_server.mjs" --model-url "http://127.0.0.1:$model_port/v1" --key "$key" --repo "$repo" \
  > "$work/node.out" 2> "$work/node.out.err" &
node_pid=$!; pids+=("$node_pid")
node_url=$(first_line "$work/node.out" "$node_pid" | sed -n 's/^listening on //p')

echo "repository $repo; question: $QUESTION"
echo "C=$C streams, $TOKENS tokens per answer, ${DELAY} ms between tokens, rounds=$ROUNDS; $(nproc) cores, load average $(cut -d" " -f1-3 /proc/loadavg); node $($node --version)"
load() { # label url pid format
  local label=$1 url=$2 pid=$3 format=$4
  python3 "$here/load.py" "$url" -c "$C" --rounds "$ROUNDS" --key "$key" --pid "$pid" --delay-ms "$DELAY" \
    --tokens "$TOKENS" --format "$format" --label "$label" --message "$QUESTION" --json "$work/$label.json" || true
  sleep 1
}
# Warm-up (JIT, allocator, connection set-up), not reported.
for target in "node $node_url/v1/platform-copilot/chat $node_pid" "pilotfish $pf_url/v1/platform-copilot/chat $pf_pid"; do
  set -- $target
  python3 "$here/load.py" "$2" -c 20 --key "$key" --delay-ms "$DELAY" --format ui --label "warm-up $1" --message "$QUESTION" > /dev/null || true
done
load model-direct "http://127.0.0.1:$model_port/v1/chat/completions" "$model_pid" openai
load node "$node_url/v1/platform-copilot/chat" "$node_pid" ui
load pilotfish "$pf_url/v1/platform-copilot/chat" "$pf_pid" ui
[ -z "$JSON_DIR" ] || { mkdir -p "$JSON_DIR"; cp "$work"/{model-direct,node,pilotfish}.json "$JSON_DIR"/ 2>/dev/null || true; }

python3 - "$work" <<'EOF'
import json, os, sys
work = sys.argv[1]
runs = {}
for name in ("model-direct", "node", "pilotfish"):
    p = os.path.join(work, name + ".json")
    if os.path.exists(p):
        runs[name] = json.load(open(p))
def f(v, nd=1):
    return "-" if v is None else "{:,.{}f}".format(v, nd)
rows = [
    ("completed / failed", lambda r: "%d / %d" % (r["completed"], r["failed"])),
    ("peak open streams", lambda r: str(r["peak_inflight"])),
    ("wall time (s)", lambda r: f(r["wall_s"], 2)),
    ("throughput (streams/s)", lambda r: f(r["streams_per_s"])),
    ("throughput (tokens/s)", lambda r: f(r["tokens_per_s"], 0)),
    ("TTFB p50 / p99 (ms)", lambda r: "%s / %s" % (f(r["ttfb_ms_p50"]), f(r["ttfb_ms_p99"]))),
    ("first token p50 / p99 (ms)", lambda r: "%s / %s" % (f(r["first_delta_ms_p50"]), f(r["first_delta_ms_p99"]))),
    ("per-token overhead p50 / p99 (ms)", lambda r: "%s / %s" % (f(r["token_overhead_ms_p50"], 2), f(r["token_overhead_ms_p99"], 2))),
    ("RSS idle / peak (MiB)", lambda r: "%s / %s" % (f(r["rss_idle_kb"] / 1024), f(r["rss_peak_kb"] / 1024))),
    ("memory per open stream (KiB)", lambda r: f(r["mem_per_stream_kb"])),
    ("server CPU (s)", lambda r: f(r["server_cpu_s"], 2)),
    ("server CPU per token (us)", lambda r: f(1e6 * r["server_cpu_s"] / max(1, r["tokens_per_s"] * r["wall_s"]), 1)),
    ("load generator CPU (s)", lambda r: f(r["load_cpu_s"], 2)),
]
names = list(runs)
w0 = max(len(r[0]) for r in rows)
print()
print("| " + " | ".join(["".ljust(w0)] + names) + " |")
print("|" + "|".join(["-" * (w0 + 2)] + ["-" * (len(n) + 2) for n in names]) + "|")
for label, fn in rows:
    cells = []
    for n in names:
        try:
            cells.append(fn(runs[n]))
        except (KeyError, TypeError, ZeroDivisionError):
            cells.append("-")
    print("| " + " | ".join([label.ljust(w0)] + cells) + " |")
if "node" in runs and "pilotfish" in runs:
    n, p = runs["node"], runs["pilotfish"]
    print()
    print("throughput ratio pilotfish / node (streams/s): %.2fx (goal >= 5x)" % (p["streams_per_s"] / n["streams_per_s"]))
    if p["mem_per_stream_kb"] > 0:
        print("memory per stream ratio node / pilotfish: %.1fx (goal >= 10x)" % (n["mem_per_stream_kb"] / p["mem_per_stream_kb"]))
    else:
        print("memory per stream: pilotfish's peak RSS did not grow above idle (node: %.1f KiB/stream)" % n["mem_per_stream_kb"])
    if p["server_cpu_s"] and n["server_cpu_s"]:
        print("server CPU ratio node / pilotfish: %.1fx" % (n["server_cpu_s"] / p["server_cpu_s"]))
EOF
