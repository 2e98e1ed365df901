#!/usr/bin/env python3
"""Indexing throughput of `pilotfish index` on the large corpus, against baselines run on the
same files in the same run:

  (a) full `pilotfish index` into a fresh store (MB/s and files/s from the indexer's --json)
  (b) baseline: a full ripgrep scan of the same files (rg -c --no-ignore -uuu)
  (c) baseline: a plain SQLite FTS5 build of the same files (bench/fts5_baseline.py)
  (d) no-change re-index of the same store
  (e) re-index after touching 10 files (mtime only), and after editing 10 files (appended line;
      the files are restored byte-for-byte with their old mtime afterwards)

Usage: bench/index_throughput.py [--corpus DIR] [--work DIR] [--pilotfish BIN] [--json OUT]

Defaults: corpus <repo>/corpus/large (fetched by bench/fetch-large-corpus.sh if missing),
work dir <repo>/build-bench/bench-work, binary <repo>/build-bench/pilotfish. The work dir keeps
the stores (pilotfish.db, fts5.db) and the file list for bench/search_latency.py.

Every figure is printed; nothing here passes or fails. Runs in about a minute on 2 cores.
"""
import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def timed(cmd, **kw):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, **kw)
    return time.perf_counter() - t0, p.stdout


def remove_db(path):
    for suffix in ("", "-wal", "-shm", "-journal", ".lock"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def pf_index(binary, corpus, db):
    wall, out = timed([binary, "index", corpus, "--db", db, "--json"])
    r = json.loads(out)
    r["wall"] = wall
    return r


def warm_page_cache(corpus, files):
    for p in files:
        with open(os.path.join(corpus, p), "rb") as f:
            while f.read(1 << 20):
                pass


def rg_scan(corpus, files, runs=3):
    """Best of `runs` full scans of exactly `files` with ripgrep (all CPUs, no ignore rules)."""
    listing = "\0".join(files).encode()
    best = None
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(
            "xargs -0 rg -c --no-ignore -uuu --no-messages -e function -- > /dev/null",
            shell=True, input=listing, cwd=corpus)
        dt = time.perf_counter() - t0
        if p.returncode not in (0, 1, 123):  # 1/123: some files without a match
            raise SystemExit("rg failed with %d" % p.returncode)
        best = dt if best is None else min(best, dt)
    return best


def rg_dir_scan(corpus, runs=3):
    best = None
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(["rg", "-c", "--no-ignore", "-uuu", "--no-messages", "-e", "function", corpus],
                       stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def mb(b):
    return b / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.path.join(REPO, "corpus", "large"))
    ap.add_argument("--work", default=os.path.join(REPO, "build-bench", "bench-work"))
    ap.add_argument("--pilotfish", default=os.path.join(REPO, "build-bench", "pilotfish"))
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    ap.add_argument("--runs", type=int, default=2,
                    help="full index runs into a fresh store; the fastest is reported (default 2)")
    args = ap.parse_args()

    corpus = os.path.abspath(args.corpus)
    if not os.path.isdir(corpus):
        sh([os.path.join(HERE, "fetch-large-corpus.sh"), corpus])
    if not os.access(args.pilotfish, os.X_OK):
        raise SystemExit("no pilotfish binary at %s; build it first (see docs/BENCHMARKS.md)" % args.pilotfish)
    # Names the allocator and the parser build, so the figures say which build they measured.
    version = subprocess.run([args.pilotfish, "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    if not shutil.which("rg"):
        raise SystemExit("ripgrep (rg) is required for the baseline")
    os.makedirs(args.work, exist_ok=True)
    db = os.path.join(args.work, "pilotfish.db")
    fts_db = os.path.join(args.work, "fts5.db")
    filelist = os.path.join(args.work, "files.txt")

    # The page cache is warmed for every contender alike: all timings are warm-cache figures.
    # The walk below is only to warm it before pilotfish runs; the baselines use the indexer's
    # own list of indexed files, read back from the store.
    all_files = []
    for d, _, names in os.walk(corpus):
        for n in names:
            all_files.append(os.path.relpath(os.path.join(d, n), corpus))
    warm_page_cache(corpus, all_files)

    # (a) full index into a fresh store, best of --runs (the machine may be shared).
    full_runs = []
    for _ in range(max(1, args.runs)):
        remove_db(db)
        full_runs.append(pf_index(args.pilotfish, corpus, db))
    full = min(full_runs, key=lambda r: r["seconds"])
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    files = [r[0] for r in con.execute("SELECT path FROM files ORDER BY path")]
    files_bytes = sum(r[0] for r in con.execute("SELECT size FROM files"))
    con.close()
    with open(filelist, "w", encoding="utf-8") as f:
        f.write("\n".join(files) + "\n")
    assert len(files) == full["indexed"], (len(files), full["indexed"])
    nbytes = full["bytes"]

    # (b) ripgrep over exactly the indexed files, and over the whole corpus directory.
    rg_s = rg_scan(corpus, files)
    rg_dir_s = rg_dir_scan(corpus)
    corpus_bytes = sum(os.lstat(os.path.join(corpus, p)).st_size for p in all_files)

    # (c) plain FTS5 build of the same files.
    _, out = timed([sys.executable, os.path.join(HERE, "fts5_baseline.py"), "build", corpus, filelist, fts_db])
    fts = json.loads(out)
    assert fts["files"] == len(files) and fts["bytes"] == files_bytes, (fts, len(files), files_bytes)

    # (d) no-change re-index.
    nochange = pf_index(args.pilotfish, corpus, db)

    # (e) 10 files: touched (mtime only), then edited and restored.
    step = max(1, len(files) // 10)
    picked = [files[i * step] for i in range(10)]
    saved = {}
    for p in picked:
        full_path = os.path.join(corpus, p)
        st = os.stat(full_path)
        with open(full_path, "rb") as f:
            saved[p] = (f.read(), st.st_atime_ns, st.st_mtime_ns)
    try:
        now = time.time_ns()
        for p in picked:
            os.utime(os.path.join(corpus, p), ns=(now, now))
        touched = pf_index(args.pilotfish, corpus, db)
        for p in picked:
            with open(os.path.join(corpus, p), "ab") as f:
                f.write(b"\n// pilotfish benchmark edit\n")
        edited = pf_index(args.pilotfish, corpus, db)
    finally:
        for p, (data, atime, mtime) in saved.items():
            with open(os.path.join(corpus, p), "wb") as f:
                f.write(data)
            os.utime(os.path.join(corpus, p), ns=(atime, mtime))
    db_bytes = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))

    pf_mbs = mb(nbytes) / full["seconds"]
    rg_mbs = mb(files_bytes) / rg_s
    fts_mbs = mb(files_bytes) / fts["seconds"]
    res = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "pilotfish_version": version,
        "corpus": {"dir": corpus, "files": len(all_files), "bytes": corpus_bytes},
        "pilotfish_full": full,
        "pilotfish_full_runs_seconds": [r["seconds"] for r in full_runs],
        "load_average_at_end": os.getloadavg(),
        "git_commit": subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                     stdout=subprocess.PIPE, text=True).stdout.strip(),
        "pilotfish_full_mb_s": pf_mbs,
        "pilotfish_full_files_s": full["indexed"] / full["seconds"],
        "pilotfish_full_wall_mb_s": mb(nbytes) / full["wall"],
        "pilotfish_db_bytes": db_bytes,
        "indexed_file_set": {"files": len(files), "bytes": files_bytes},
        "rg_seconds": rg_s, "rg_mb_s": rg_mbs, "rg_files_s": len(files) / rg_s,
        "rg_dir_seconds": rg_dir_s, "rg_dir_mb_s": mb(corpus_bytes) / rg_dir_s,
        "fts5": fts, "fts5_mb_s": fts_mbs, "fts5_files_s": fts["files"] / fts["seconds"],
        "fts5_db_bytes": os.path.getsize(fts_db),
        "ratio_pilotfish_over_rg": pf_mbs / rg_mbs,
        "ratio_pilotfish_over_fts5": pf_mbs / fts_mbs,
        "reindex_nochange": nochange,
        "reindex_touch10": touched,
        "reindex_edit10": edited,
    }

    print("pilotfish full index runs (s): %s; load average now %.2f %.2f %.2f"
          % (", ".join("%.2f" % r["seconds"] for r in full_runs), *os.getloadavg()))
    print("binary: %s" % version)
    print("corpus %s: %d files, %.1f MB on disk" % (corpus, len(all_files), mb(corpus_bytes)))
    print("indexed file set: %d files, %.1f MB (skipped by the indexer: %s)"
          % (len(files), mb(files_bytes), json.dumps(full["skipped"])))
    print()
    fmt = "%-38s %9s %9s %9s"
    print(fmt % ("", "seconds", "MB/s", "files/s"))
    row = "%-38s %9.2f %9.1f %9.0f"
    print(row % ("pilotfish index (full, fresh store)", full["seconds"], pf_mbs, full["indexed"] / full["seconds"]))
    print(row % ("  same, process wall time", full["wall"], mb(nbytes) / full["wall"], full["indexed"] / full["wall"]))
    print(row % ("baseline: rg -c over the same files", rg_s, rg_mbs, len(files) / rg_s))
    print(row % ("baseline: plain FTS5 build (python)", fts["seconds"], fts_mbs, fts["files"] / fts["seconds"]))
    print(row % ("(rg -c over the whole corpus dir)", rg_dir_s, mb(corpus_bytes) / rg_dir_s, len(all_files) / rg_dir_s))
    print()
    print("ratio pilotfish/rg:   %.3f  (rg is %.0fx faster)" % (pf_mbs / rg_mbs, rg_mbs / pf_mbs))
    print("ratio pilotfish/FTS5: %.3f  (FTS5 is %.1fx faster)" % (pf_mbs / fts_mbs, fts_mbs / pf_mbs))
    print("chunks: %d; store %.1f MB; FTS5 baseline db %.1f MB"
          % (full["chunks"], mb(db_bytes), mb(res["fts5_db_bytes"])))
    print()
    for name, r in (("no-change re-index", nochange), ("re-index, 10 files touched", touched),
                    ("re-index, 10 files edited", edited)):
        print("%-28s %.3f s (process wall %.3f s): %d indexed, %d unchanged"
              % (name, r["seconds"], r["wall"], r["indexed"], r["unchanged"]))
    print()
    print("goal >= 10 MB/s full index: %s (%.1f MB/s)" % ("met" if pf_mbs >= 10 else "NOT met", pf_mbs))
    print("goal < 1 s no-change re-index: %s (%.3f s)" % ("met" if nochange["wall"] < 1 else "NOT met", nochange["wall"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
