#!/usr/bin/env bash
# The main job on the embedded default (one SQLite file, no service): installs the
# dependencies, builds, indexes a repository (default: this one), answers a search, and asks the
# question as a chat would: with no model configured, the answer lists the best places.
#   scripts/run.sh [REPO_DIR] [QUERY...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
repo=${1:-$root}
shift || true
query=${*:-"how are markdown files split into chunks"}
bash scripts/install-deps.sh
bash scripts/build.sh
db=${PILOTFISH_DB:-$root/.pilotfish/index.db}
echo "== pilotfish index $repo"
build/pilotfish index "$repo" --db "$db"
echo "== pilotfish search \"$query\""
build/pilotfish search --db "$db" --limit 5 "$query"
echo "== pilotfish ask \"$query\" (the embedded default: no model, a retrieval-only answer)"
printf '{}\n' > "$(dirname "$db")/no-models.json"
build/pilotfish ask --db "$db" --config "$(dirname "$db")/no-models.json" --repo "$repo" "$query"
