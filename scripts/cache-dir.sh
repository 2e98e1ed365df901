#!/usr/bin/env bash
# Prints the folder where builds keep what outlives a clone (compiler cache, llama.cpp builds):
# $PILOTFISH_CACHE_DIR, else /var/cache/pilotfish when it can be written (CI runs as root), else
# ~/.cache/pilotfish. Creates it. Sourced by build.sh and build-llama.sh.
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
