# Sourced by run.sh and replicas.sh: the pieces both set up the same way.

# Waits for the first line of a background process's stdout file and prints it.
first_line() {
  local file=$1 pid=$2
  for _ in $(seq 1 200); do
    if [ -s "$file" ] && [ "$(wc -l < "$file")" -ge 1 ]; then head -n 1 "$file"; return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "$0: process $pid exited: $(cat "$file" "$file.err" 2>/dev/null)" >&2; return 1; }
    sleep 0.05
  done
  echo "$0: no first line from process $pid" >&2; return 1
}

# A three-file repository for retrieval and tools, in DIR.
tiny_repo() {
  mkdir -p "$1/src"
  printf 'export function greet(name: string) { return "hi " + name; }\n' > "$1/src/a.ts"
  printf 'import { greet } from "./a";\n\nexport function welcome(names: string[]) {\n  return names.map(greet).join("\\n");\n}\n' > "$1/src/b.ts"
  printf '# Tiny repo\n\nThe `greet` function in src/a.ts says hi; `welcome` greets a list.\n' > "$1/README.md"
}

# A fresh API key in $key, and FILE a config with the model server on MODEL_PORT and that key;
# $BENCH_LIMITS, when set, is the server's "limits" object (e.g. '{"answersInSetup": 0}').
bench_config() {
  local file=$1 model_port=$2 hash limits=""
  [ -z "${BENCH_LIMITS:-}" ] || limits=", \"limits\": $BENCH_LIMITS"
  key=bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  hash=$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)
  cat > "$file" <<JSON
{"providers": {"bench": {"type": "openai", "baseUrl": "http://127.0.0.1:$model_port/v1", "models": [{"id": "m1"}]}},
 "defaults": {"chatModel": "bench:m1"},
 "server": {"apiKeys": [{"name": "bench", "hash": "sha256:$hash", "role": "user"}]$limits}}
JSON
}
