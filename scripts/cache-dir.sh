#!/usr/bin/env bash
# What builds keep outside the clone (compiler cache, llama.cpp builds), so that a machine that
# built pilotfish before rebuilds only what changed. Sourced by build.sh, build-llama.sh and
# fuzz.sh.

# Prints the folder: $PILOTFISH_CACHE_DIR, else /var/cache/pilotfish when it can be written (CI
# runs as root), else ~/.cache/pilotfish. Creates it.
pf_cache_dir() {
  local dir=${PILOTFISH_CACHE_DIR:-}
  if [ -z "$dir" ]; then
    if mkdir -p /var/cache/pilotfish 2>/dev/null && [ -w /var/cache/pilotfish ]; then
      dir=/var/cache/pilotfish
    else
      dir=${XDG_CACHE_HOME:-$HOME/.cache}/pilotfish
    fi
  fi
  mkdir -p "$dir"
  printf '%s\n' "$dir"
}

# ccache for a build of the clone at $1, its folder inside pf_cache_dir: exports its settings
# (paths taken relative to the clone, so clones in other folders share it) and sets the array
# PF_CCACHE_ARGS to the CMake arguments that use it; empty where ccache is missing or
# PILOTFISH_CCACHE=0. ccache never caches web_assets.cpp (its .incbin).
pf_use_ccache() {
  PF_CCACHE_ARGS=()
  command -v ccache >/dev/null 2>&1 && [ "${PILOTFISH_CCACHE:-1}" = 1 ] || return 0
  export CCACHE_DIR=${CCACHE_DIR:-$(pf_cache_dir)/ccache} CCACHE_BASEDIR="$1" CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  PF_CCACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}
