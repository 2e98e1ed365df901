#!/usr/bin/env python3
"""Past one machine, by simulation from measured figures (issue 25; docs/ARCHITECTURE.md).

  shard_model.py BENCH_JSON [--text-gb 100] [--repos 500] [--rtt-ms 0.5] [--questions 20000]

BENCH_JSON is what `bench/linux_source.sh --json` wrote: one store of the Linux tree (text
size, full index time, store size, and every warm served search's time). The model: a company's
text (--text-gb, in --repos repositories of log-normal sizes) packed into shards of a target size
(first fit, largest first), each shard a store served by its own replicas: repositories kept
whole, or those over the target split by folder into pieces within it (a shard may hold any set
of chunks: ranking with summed statistics is exact whatever the split). A question goes to every shard: round one sums the shards' statistics (one RTT
and the per-term counts, kept per generation, so about nothing), round two ranks on every shard
at once and merges by score. A shard's search time is a measured sample from the Linux store,
its size-dependent part scaled by the shard's size (the work is the rare terms' postings, which
grow with the text); the fixed part is the fastest sample (HTTP and JSON). The question's time is
the slowest shard's, plus two RTTs. Prints one row per shard size; random draws seeded.
"""
import argparse
import json
import math
import random
import statistics


def pack(sizes, target):
    """First fit, largest first; a piece over the target gets a shard of its own."""
    shards = []
    for s in sorted(sizes, reverse=True):
        for i, used in enumerate(shards):
            if used + s <= target:
                shards[i] += s
                break
        else:
            shards.append(s)
    return shards


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_json")
    ap.add_argument("--text-gb", type=float, default=100)
    ap.add_argument("--repos", type=int, default=500)
    ap.add_argument("--rtt-ms", type=float, default=0.5)
    ap.add_argument("--questions", type=int, default=20000)
    a = ap.parse_args()
    bench = json.load(open(a.bench_json))
    store = next(s for s in bench["stores"] if s["store"] == "sqlite")
    gb = store["text_bytes"] / 1e9
    samples = store["served_ms"]
    fixed = min(samples)
    rng = random.Random(25)
    # Repository sizes: log-normal (a few monorepos, many small services), scaled to the total.
    raw = [rng.lognormvariate(0, 1.5) for _ in range(a.repos)]
    sizes = [r / sum(raw) * a.text_gb for r in raw]
    print(f"measured: one store of {gb:.2f} GB of text: warm served searches p50 "
          f"{statistics.median(samples):.1f} ms, p99 {sorted(samples)[int(0.99 * (len(samples) - 1))]:.1f} ms "
          f"(fixed part {fixed:.1f} ms); full index {store['index_s']:.0f} s on 2 cores; "
          f"store {store['store_over_text']:.2f}x the text")
    print(f"model: {a.text_gb:.0f} GB in {a.repos} repositories (largest {max(sizes):.1f} GB), "
          f"RTT {a.rtt_ms} ms, {a.questions} questions to every shard\n")
    print("| shard target | repositories | shards | largest | p50 | p99 | shard-seconds a question | "
          "disk a shard (SQLite) | full index of a shard, 2 cores |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for target, split in [(t, sp) for t in (1, 2, 5, 10, 25, 100) for sp in (False, True)]:
        if split and target >= max(sizes):
            continue
        # Whole, or the ones over the target split by folder into pieces within it.
        pieces = [p for s in sizes for p in ([s / math.ceil(s / target)] * math.ceil(s / target)
                                              if split else [s])]
        shards = pack(pieces, target)
        times, work = [], []
        for _ in range(a.questions):
            slowest = total = 0.0
            for s in shards:
                t = rng.choice(samples)
                t = fixed + (t - fixed) * s / gb
                slowest = max(slowest, t)
                total += t
            times.append(slowest + 2 * a.rtt_ms)
            work.append(total / 1000)
        times.sort()
        big = max(shards)
        print(f"| {target} GB | {'split by folder' if split else 'whole'} | {len(shards)} | {big:.1f} GB | {times[len(times) // 2]:.0f} ms | "
              f"{times[int(0.99 * (len(times) - 1))]:.0f} ms | {statistics.mean(work):.2f} | "
              f"{big * store['store_over_text']:.0f} GB | "
              f"{store['index_s'] * big / gb / 60:.0f} min |")


main()
