#!/usr/bin/env python3
"""Searches against a `pilotfish serve` that was just started (bench/linux_source.sh).

  served_searches.py SERVE_STDOUT QUERIES ROUNDS

Waits for the server's "listening on URL" line in SERVE_STDOUT (the time from this script's
start to that line is startup_s), sends the first query once (first_search_s: that request,
start to end of body), then every query once more as a warm-up, then ROUNDS x every query
(served_p50_ms, served_p99_ms over those; served_ms: each of them, sorted). Prints JSON. GET /v1/search?q=...&mode=lexical.
"""
import json
import statistics
import sys
import time
import urllib.parse
import urllib.request


def main():
    out_path, queries_path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    queries = [l.strip() for l in open(queries_path) if l.strip()]
    t0 = time.perf_counter()
    url = None
    while url is None:
        for line in open(out_path):
            if line.startswith("listening on "):
                url = line.split()[2].rstrip("/")
        if url is None:
            if time.perf_counter() - t0 > 600:
                sys.exit("serve did not start in 600 s")
            time.sleep(0.01)
    startup = time.perf_counter() - t0

    def search(q):
        t = time.perf_counter()
        with urllib.request.urlopen(url + "/v1/search?" + urllib.parse.urlencode(
                {"q": q, "mode": "lexical"}), timeout=600) as r:
            body = r.read()
        if not json.loads(body).get("results"):
            sys.exit("no results for " + q)
        return time.perf_counter() - t

    first = search(queries[0])
    for q in queries:
        search(q)
    times = sorted(search(q) * 1000 for _ in range(rounds) for q in queries)
    print(json.dumps({"startup_s": startup, "first_search_s": first,
                      "served_searches": len(times),
                      "served_p50_ms": statistics.median(times),
                      "served_p99_ms": times[int(0.99 * (len(times) - 1))],
                      "served_ms": [round(t, 3) for t in times]}))


main()
