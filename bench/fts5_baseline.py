#!/usr/bin/env python3
"""Plain SQLite FTS5 baseline for the pilotfish benchmarks (stdlib sqlite3 only).

  fts5_baseline.py build ROOT FILELIST DB
      One row per file (path, content), default unicode61 tokenizer, all inserts in one
      transaction, into a fresh file database. FILELIST: one path per line, relative to ROOT.
      Prints JSON {files, bytes, seconds, chunks}.

  fts5_baseline.py query DB QUERIES [--limit N] [--repeat R]
      Runs each query (one per line) in-process as a plain FTS5 OR query ranked by bm25, top N,
      and prints JSON {queries, p50_ms, p99_ms, mean_ms, ...}. The same stop words as pilotfish's
      query analysis are dropped, so that both sides search for the same words.
"""
import json
import os
import re
import sqlite3
import statistics
import sys
import time

# Same list as src/search/query.cpp (kept in step by hand; only used to be fair to the baseline).
STOP_WORDS = set("""
a about after all also am an and any are as at be been before being but by can could did do does
doing done each else for from get gets had has have having he her here him his how i if in into is
it its just me might more most my no not of on once only or other our out own same she should so
some such than that the their them then there these they this those through to too under until up
us very was we were what when where which while who whom why will with would you your yours happens
happen work works way want need needs use using used make makes there's i'm let lets tell explain
show find code which whats something thing things actually s t exactly happening instead anything
doesn't don't
""".split())


def build(root, filelist, db):
    with open(filelist, encoding="utf-8") as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    start = time.perf_counter()
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("CREATE VIRTUAL TABLE docs USING fts5(path, content)")
    con.execute("BEGIN")
    n = nbytes = 0
    for p in paths:
        with open(os.path.join(root, p), "rb") as f:
            data = f.read()
        nbytes += len(data)
        con.execute("INSERT INTO docs(path, content) VALUES (?, ?)",
                    (p, data.decode("utf-8", errors="replace")))
        n += 1
    con.execute("COMMIT")
    con.close()
    seconds = time.perf_counter() - start
    print(json.dumps({"files": n, "bytes": nbytes, "seconds": seconds, "chunks": n}))


def to_match(text):
    words = []
    for w in re.findall(r"[A-Za-z0-9]+", text):
        w = w.lower()
        if w in STOP_WORDS or (len(w) == 1 and not w.isdigit()) or w in words:
            continue
        words.append(w)
    return " OR ".join('"%s"' % w for w in words)


def percentile(sorted_values, q):
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[k]


def query(db, queries_file, limit=10, repeat=3):
    with open(queries_file, encoding="utf-8") as f:
        queries = [line.rstrip("\n") for line in f if line.strip()]
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    sql = "SELECT rowid, path, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?"
    # Warm-up pass: page cache and statement cache, not measured.
    hits = 0
    for q in queries:
        m = to_match(q)
        if m:
            hits += len(con.execute(sql, (m, limit)).fetchall())
    times = []
    for _ in range(repeat):
        for q in queries:
            t0 = time.perf_counter()
            m = to_match(q)
            rows = con.execute(sql, (m, limit)).fetchall() if m else []
            times.append((time.perf_counter() - t0) * 1000.0)
            del rows
    times.sort()
    print(json.dumps({
        "queries": len(queries), "samples": len(times), "hits_first_pass": hits,
        "p50_ms": percentile(times, 0.50), "p90_ms": percentile(times, 0.90),
        "p99_ms": percentile(times, 0.99), "mean_ms": statistics.fmean(times),
        "max_ms": times[-1] if times else 0.0,
    }))


def main(argv):
    if len(argv) >= 5 and argv[1] == "build":
        build(argv[2], argv[3], argv[4])
    elif len(argv) >= 4 and argv[1] == "query":
        limit, repeat = 10, 3
        rest = argv[4:]
        while rest:
            if rest[0] == "--limit":
                limit = int(rest[1])
            elif rest[0] == "--repeat":
                repeat = int(rest[1])
            else:
                sys.exit("unknown option " + rest[0])
            rest = rest[2:]
        query(argv[2], argv[3], limit, repeat)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
