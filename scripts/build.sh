#!/usr/bin/env bash
# Configures and builds pilotfish into build/ (Release). Extra arguments go to cmake.
#
# A Release build compiles tree-sitter with profile-guided optimisation (see
# PILOTFISH_TREESITTER_PGO in CMakeLists.txt): once per build directory, and again when the
# pinned grammars or the compiler change, it builds an instrumented pilotfish, indexes the pinned
# undici package (third_party/undici, fetched with the grammars: JavaScript, TypeScript) and the
# tree-sitter runtime's own C sources (C, the language of the largest repositories) to record
# where the parser branches, then rebuilds tree-sitter with those profiles. PILOTFISH_PGO=0 skips it; sanitizer,
# fuzz and Debug builds never use it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PILOTFISH_BUILD_DIR:-$root/build}
jobs=$(nproc)

# ccache, its folder outside the clone (scripts/cache-dir.sh).
. "$root/scripts/cache-dir.sh"
pf_use_ccache "$root"
set -- "${PF_CCACHE_ARGS[@]}" "$@"

# llama.cpp for local models: built once into third_party/llama.cpp/build, then reused.
"$root/scripts/build-llama.sh"

pgo=${PILOTFISH_PGO:-1}
case " $* " in
  *SANITIZE=ON* | *FUZZ=ON* | *BUILD_TYPE=Debug*) pgo=0 ;;
esac

if [ "$pgo" = 1 ]; then
  "$root/scripts/fetch-third-party.sh"
  stamp="$build/pgo-trained"
  want="$(sha256sum "$root/scripts/third-party.lock" | cut -c1-16) $(cc --version | head -n 1) c"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "build: profile-guided tree-sitter, step 1 of 3: instrumented build"
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" \
      -DPILOTFISH_TREESITTER_PGO=generate >/dev/null
    cmake --build "$build" -j"$jobs" --target pilotfish
    echo "build: profile-guided tree-sitter, step 2 of 3: training run on undici and C sources"
    find "$build/CMakeFiles/treesitter.dir" -name '*.gcda' -delete
    train=$(mktemp -d)
    trap 'rm -rf "$train"' EXIT
    "$build/pilotfish" index "$root/third_party/tree-sitter/vendor/tree-sitter/lib/src" \
      --db "$train/train.db" --quiet
    report=$("$build/pilotfish" index "$root/third_party/undici" --db "$train/train.db" --json)
    # A training run that parsed nothing would leave empty profiles and a silently slower build.
    indexed=$(printf '%s' "$report" | python3 -c 'import json,sys; print(json.load(sys.stdin)["indexed"])')
    if [ "$indexed" -lt 100 ]; then
      echo "build: the training run indexed only $indexed files of undici: $report" >&2
      exit 1
    fi
    echo "$want" > "$stamp"
    echo "build: profile-guided tree-sitter, step 3 of 3: optimised build"
  fi
  set -- "$@" -DPILOTFISH_TREESITTER_PGO=use
else
  set -- "$@" -DPILOTFISH_TREESITTER_PGO=off
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j"$jobs"
if [ "$pgo" = 1 ] && ! "$build/pilotfish" --version | grep -q "parser: profile-guided"; then
  echo "build: pilotfish was not built with the parser profiles: $("$build/pilotfish" --version)" >&2
  exit 1
fi
