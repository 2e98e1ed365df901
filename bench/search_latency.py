#!/usr/bin/env python3
"""Search latency of pilotfish on an index of >= 100k chunks, against a plain FTS5 baseline run
on the same queries in the same run.

  1. Store: <work>/pilotfish.db from bench/index_throughput.py if it holds >= 100k chunks,
     otherwise the corpus is indexed here (with --max-lines 40 if the default chunking gives
     fewer than 100k chunks).
  2. Queries: ~200 deterministic developer queries (<work>/queries.txt): identifiers declared in
     the corpus, questions built from fixed templates and the words of other identifiers, and a
     fixed list of hand-written questions. Same corpus + same chunker = same queries.
  3. pilotfish, in-process: bench/pf_search_latency (links pf_search; pf::lexical_search with
     the CLI's defaults: 10 results, 2 per file), 1 warm-up pass + 3 measured passes.
  4. pilotfish, CLI: wall time of `pilotfish search --json` for 30 of the queries, and of a
     query with no searchable words (start-up, open, no FTS work), to show the process cost.
  5. Baseline: the same queries as plain FTS5 OR queries (bm25, top 10) over the one-row-per-file
     FTS5 table of bench/fts5_baseline.py, timed in-process in python (1 warm-up + 3 passes).

Usage: bench/search_latency.py [--corpus DIR] [--work DIR] [--build DIR] [--json OUT]
"""
import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MIN_CHUNKS = 100_000

FIXED_QUESTIONS = [
    "how does change detection decide when to re-render a component",
    "where are database migrations generated",
    "how does debounce handle leading and trailing calls",
    "where does webpack resolve module request paths",
    "how does switchMap unsubscribe from the previous inner observable",
    "how are query builder joins turned into SQL",
    "where is the connection pool size configured",
    "how does the compiler report diagnostics for unused variables",
    "how are HTTP request timeouts handled",
    "where is the schema validated before saving a document",
    "how do I parse an ISO date string with a custom format",
    "how does the scene graph update world matrices",
    "where are lifecycle hooks called in order",
    "how is dependency injection resolved for providers",
    "how do I retry a failed observable with a delay",
    "what happens when a transaction is rolled back",
    "how does the bundler split chunks for lazy loaded modules",
    "where are table column types mapped to typescript types",
    "how does the form control track validation errors",
    "how are event listeners removed when a stream completes",
]

TEMPLATES = [
    "how does {w} work",
    "where is {i} defined",
    "how do I configure {w}",
    "what calls {i}",
    "why does {w} throw an error",
    "how to handle errors in {w}",
    "where are {w} options validated",
    "how is {w} cached",
    "what does {i} return",
    "how to test {w}",
]


def split_words(ident):
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", ident)
    return " ".join(p.lower() for p in parts)


def make_queries(db, n_ident=100, n_template=80):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    idents = sorted({r[0] for r in con.execute(
        "SELECT DISTINCT symbol FROM copilot_code_chunks "
        "WHERE symbol GLOB '[a-z]*[A-Z]*' AND length(symbol) BETWEEN 8 AND 32 "
        "AND symbol NOT GLOB '*[^A-Za-z0-9]*'")})
    con.close()
    rnd = random.Random(20240529)
    picked = rnd.sample(idents, n_ident + n_template)
    queries = list(picked[:n_ident])
    for k, ident in enumerate(picked[n_ident:]):
        queries.append(TEMPLATES[k % len(TEMPLATES)].format(w=split_words(ident), i=ident))
    queries += FIXED_QUESTIONS
    return queries


def chunks_in(binary, db):
    p = subprocess.run([binary, "stats", "--db", db, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return json.loads(p.stdout)["chunks"] if p.returncode == 0 else 0


def cli_times(binary, db, queries):
    out = []
    for q in queries:
        t0 = time.perf_counter()
        subprocess.run([binary, "search", q, "--db", db, "--json", "-n", "10"], check=True,
                       stdout=subprocess.DEVNULL)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.path.join(REPO, "corpus", "large"))
    ap.add_argument("--work", default=os.path.join(REPO, "build-bench", "bench-work"))
    ap.add_argument("--build", default=os.path.join(REPO, "build-bench"))
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    args = ap.parse_args()
    pilotfish = os.path.join(args.build, "pilotfish")
    latency_bin = os.path.join(args.build, "bench", "pf_search_latency")
    for b in (pilotfish, latency_bin):
        if not os.access(b, os.X_OK):
            raise SystemExit("missing %s; build with -DPILOTFISH_BENCH=ON (see docs/BENCHMARKS.md)" % b)
    corpus = os.path.abspath(args.corpus)
    if not os.path.isdir(corpus):
        subprocess.run([os.path.join(HERE, "fetch-large-corpus.sh"), corpus], check=True)
    os.makedirs(args.work, exist_ok=True)

    # 1. A store with >= 100k chunks.
    db = os.path.join(args.work, "pilotfish.db")
    if chunks_in(pilotfish, db) < MIN_CHUNKS:
        subprocess.run([pilotfish, "index", corpus, "--db", db, "--quiet"], check=True)
    if chunks_in(pilotfish, db) < MIN_CHUNKS:
        db = os.path.join(args.work, "pilotfish-40lines.db")
        subprocess.run([pilotfish, "index", corpus, "--db", db, "--quiet", "--max-lines", "40"], check=True)
    chunks = chunks_in(pilotfish, db)

    fts_db = os.path.join(args.work, "fts5.db")
    if not os.path.exists(fts_db):
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        files = [r[0] for r in con.execute("SELECT path FROM files ORDER BY path")]
        con.close()
        filelist = os.path.join(args.work, "files.txt")
        with open(filelist, "w", encoding="utf-8") as f:
            f.write("\n".join(files) + "\n")
        subprocess.run([sys.executable, os.path.join(HERE, "fts5_baseline.py"), "build", corpus,
                        filelist, fts_db], check=True, stdout=subprocess.DEVNULL)
    fts_rows = sqlite3.connect("file:%s?mode=ro" % fts_db, uri=True).execute(
        "SELECT count(*) FROM docs").fetchone()[0]

    # 2. Queries.
    queries = make_queries(db)
    qfile = os.path.join(args.work, "queries.txt")
    with open(qfile, "w", encoding="utf-8") as f:
        f.write("\n".join(queries) + "\n")

    # 3. In-process pilotfish.
    p = subprocess.run([latency_bin, db, qfile, "--repeat", "3"], check=True, stdout=subprocess.PIPE)
    pf = json.loads(p.stdout)

    # 4. CLI wall time vs start-up.
    sample = queries[::len(queries) // 30][:30]
    cli = cli_times(pilotfish, db, sample)
    startup = cli_times(pilotfish, db, ["the"] * 30)  # only a stop word: no FTS query at all

    # 5. Plain FTS5 baseline.
    p = subprocess.run([sys.executable, os.path.join(HERE, "fts5_baseline.py"), "query", fts_db,
                        qfile, "--limit", "10", "--repeat", "3"], check=True, stdout=subprocess.PIPE)
    fts = json.loads(p.stdout)

    res = {
        "db": db, "chunks": chunks, "fts5_rows": fts_rows, "queries": len(queries),
        "pilotfish_in_process": pf, "fts5_in_process": fts,
        "cli_sample_median_ms": statistics.median(cli), "cli_sample_p90_ms": sorted(cli)[int(0.9 * (len(cli) - 1))],
        "cli_startup_median_ms": statistics.median(startup),
        "ratio_p50_pilotfish_over_fts5": pf["p50_ms"] / fts["p50_ms"],
        "ratio_p99_pilotfish_over_fts5": pf["p99_ms"] / fts["p99_ms"],
        "load_average_at_end": os.getloadavg(),
    }
    print("store %s: %d chunks; FTS5 baseline: %d rows (one per file)" % (db, chunks, fts_rows))
    print("%d queries (%s), %d timed samples each side" % (len(queries), qfile, pf["samples"]))
    print()
    print("%-44s %9s %9s %9s %9s" % ("", "p50 ms", "p90 ms", "p99 ms", "mean ms"))
    row = "%-44s %9.3f %9.3f %9.3f %9.3f"
    print(row % ("pilotfish lexical_search (in-process)", pf["p50_ms"], pf["p90_ms"], pf["p99_ms"], pf["mean_ms"]))
    print(row % ("baseline: plain FTS5 OR query (python)", fts["p50_ms"], fts["p90_ms"], fts["p99_ms"], fts["mean_ms"]))
    print()
    print("ratio pilotfish/FTS5: p50 %.2f, p99 %.2f"
          % (res["ratio_p50_pilotfish_over_fts5"], res["ratio_p99_pilotfish_over_fts5"]))
    print("pilotfish results: %d queries with none (of %d)" % (pf["empty_results"], pf["queries"]))
    print("CLI `pilotfish search --json`: median %.1f ms over %d queries; start-up + open with no"
          " FTS work (query 'the'): median %.1f ms; difference %.1f ms"
          % (res["cli_sample_median_ms"], len(sample), res["cli_startup_median_ms"],
             res["cli_sample_median_ms"] - res["cli_startup_median_ms"]))
    print()
    print("goal p50 < 5 ms: %s (%.3f ms)" % ("met" if pf["p50_ms"] < 5 else "NOT met", pf["p50_ms"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
