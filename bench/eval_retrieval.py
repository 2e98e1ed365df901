#!/usr/bin/env python3
"""Runs the shared retrieval eval (../shared/eval) against pilotfish and prints the scorer's table.

Indexes the pinned undici corpus into a fresh store, asks every question through
`pilotfish search --json`, writes the results file and scores it with the shared scorer.
Also runs the no-project FTS5 baseline in the same run so the two figures sit side by side.

usage: bench/eval_retrieval.py [--binary build/pilotfish] [--extra-index-arg ARG] [--limit 10]
                               [--db postgresql://...]
"""
import argparse, json, os, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
shared = os.path.join(root, "..", "shared", "eval")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(root, "build", "pilotfish"))
    ap.add_argument("--corpus", default=os.path.join(root, "corpus", "undici"))
    ap.add_argument("--index-arg", action="append", default=[])
    ap.add_argument("--search-arg", action="append", default=[])
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--json", help="write metrics JSON here")
    ap.add_argument("--db", help="the store to index into (a path or a postgres:// URL of an "
                                 "empty database); default: a fresh SQLite file")
    a = ap.parse_args()

    subprocess.run(["bash", os.path.join(shared, "fetch-corpus.sh"), "undici@7.30.2", a.corpus],
                   check=True, stdout=subprocess.DEVNULL)
    pkg = os.path.join(a.corpus, "package")
    tmp = tempfile.mkdtemp(prefix="pf-eval-")
    db = a.db or os.path.join(tmp, "eval.db")
    subprocess.run([a.binary, "index", pkg, "--db", db, "-q"] + a.index_arg, check=True)
    questions = [json.loads(l) for l in open(os.path.join(shared, "undici-questions.jsonl"))]
    out = os.path.join(tmp, "results.jsonl")
    with open(out, "w") as f:
        for q in questions:
            r = subprocess.run([a.binary, "search", "--db", db, "--json", "-n", str(a.limit)]
                               + a.search_arg + [q["question"]],
                               check=True, capture_output=True, text=True)
            res = json.loads(r.stdout)["results"]
            f.write(json.dumps({"id": q["id"], "results": [
                {"path": x["path"], "startLine": x["startLine"], "endLine": x["endLine"]} for x in res]}) + "\n")
    score = [sys.executable, os.path.join(shared, "score.py"), "--results", out]
    if a.show_misses: score.append("--show-misses")
    if a.json: score += ["--json", a.json]
    print("== pilotfish (lexical) ==", flush=True)
    subprocess.run(score, check=True)
    if not a.no_baseline:
        base = os.path.join(tmp, "baseline.jsonl")
        subprocess.run([sys.executable, os.path.join(shared, "baseline_fts5.py"), "--corpus", pkg,
                        "--questions", os.path.join(shared, "undici-questions.jsonl"), "--out", base],
                       check=True, stdout=subprocess.DEVNULL)
        print("== baseline: SQLite FTS5, 60-line windows ==", flush=True)
        subprocess.run([sys.executable, os.path.join(shared, "score.py"), "--results", base], check=True)

if __name__ == "__main__":
    main()
