#!/usr/bin/env python3
"""Load generator for bench/concurrency (stdlib asyncio, raw sockets).

Opens C concurrent chat streams against URL (several URLs: replicas, taken round-robin; ramped
in over --ramp-ms), each worker doing
--rounds streams one after the other, reads every SSE stream to data: [DONE], and records per
stream the time to first byte of the body (TTFB), the time to the first text delta and the gaps
between text deltas. Reports wall time, completed/failed streams, streams/s and tokens/s, TTFB and
first-delta p50/p99, per-token overhead p50/p99 (inter-delta gap minus --delay-ms, the model's
inter-token delay), and with --pid (repeated for replicas: summed) the server's idle RSS, peak RSS (VmRSS sampled every 50 ms),
(peak - idle) / C = memory per open stream, and the CPU seconds the server used.

--format ui (default) posts the Activepieces body {message, conversationHistory} and counts
"type":"text-delta" events; --format openai posts an OpenAI chat request (stream: true) and counts
content deltas, to measure the model server directly (the harness floor).

usage: load.py URL [URL...] [-c 1000] [--rounds 1] [--key KEY] [--pid PID] [--delay-ms 20] [--tokens N]
               [--format ui|openai] [--ramp-ms 200] [--timeout 300] [--label NAME] [--json OUT]
"""
import argparse, asyncio, json, os, resource, sys, time
from urllib.parse import urlsplit

DELTA = {"ui": b'"type":"text-delta"', "openai": b'"content":'}
DONE = b"data: [DONE]\n\n"


class Rec:
    __slots__ = ("t0", "t_body", "deltas", "done", "error", "status")

    def __init__(self, t0):
        self.t0, self.t_body, self.deltas, self.done, self.error, self.status = t0, None, [], False, None, None


class Stream(asyncio.Protocol):
    def __init__(self, rec, request, fmt, fut, stats):
        self.rec, self.request, self.fut, self.stats = rec, request, fut, stats
        self.marker = DELTA[fmt]
        self.fmt = fmt
        self.head = b""
        self.headers_done = False
        self.chunked = False
        self.cbuf = b""
        self.remaining = 0
        self.need_crlf = False
        self.tail = self.dtail = b""
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        self.stats["inflight"] += 1
        self.stats["peak_inflight"] = max(self.stats["peak_inflight"], self.stats["inflight"])
        transport.write(self.request)

    def finish(self, error=None):
        if self.fut.done():
            return
        if error and not self.rec.done:
            self.rec.error = error
        self.stats["inflight"] -= 1
        self.fut.set_result(None)
        if self.transport:
            self.transport.close()

    def dechunk(self, data):
        self.cbuf += data
        out = []
        while self.cbuf:
            if self.remaining:
                take = self.cbuf[:self.remaining]
                out.append(take)
                self.cbuf = self.cbuf[len(take):]
                self.remaining -= len(take)
                if self.remaining == 0:
                    self.need_crlf = True
                continue
            if self.need_crlf:
                if len(self.cbuf) < 2:
                    break
                self.cbuf = self.cbuf[2:]
                self.need_crlf = False
                continue
            i = self.cbuf.find(b"\r\n")
            if i < 0:
                break
            size = int(self.cbuf[:i].split(b";")[0], 16)
            self.cbuf = self.cbuf[i + 2:]
            if size == 0:
                self.cbuf = b""
                break
            self.remaining = size
        return b"".join(out)

    def data_received(self, data):
        t = time.monotonic()
        if not self.headers_done:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.head[:end].decode("latin-1").split("\r\n")
            data = self.head[end + 4:]
            self.headers_done = True
            try:
                self.rec.status = int(lines[0].split(" ")[1])
            except (IndexError, ValueError):
                return self.finish("bad status line %r" % lines[0])
            for line in lines[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "transfer-encoding" and "chunked" in v.lower():
                    self.chunked = True
            if self.rec.status != 200:
                return self.finish("HTTP %d" % self.rec.status)
        if self.chunked:
            data = self.dechunk(data)
        if not data:
            return
        if self.rec.t_body is None:
            self.rec.t_body = t
        # Count markers in this read; the tails kept from the last read are one byte shorter than
        # what is searched for, so nothing is counted twice and nothing split across reads is missed.
        window = self.tail + data
        n = window.count(self.marker)
        if n:
            self.rec.deltas.extend([t] * n)
        if DONE in self.dtail + data:
            self.rec.done = True
            return self.finish()
        self.tail = window[-(len(self.marker) - 1):]
        self.dtail = (self.dtail + data)[-(len(DONE) - 1):]

    def eof_received(self):
        self.finish("connection closed before data: [DONE]")

    def connection_lost(self, exc):
        self.finish("connection lost before data: [DONE]: %s" % exc)


def pct(values, p):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100.0 * len(s) + 0.5)) - 1))]


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None


def cpu_s(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


async def run(a):
    targets = []  # (host, port, request bytes): streams go round-robin across them (replicas)
    for url in a.url:
        u = urlsplit(url)
        host, port = u.hostname, u.port or 80
        if a.format == "ui":
            body = json.dumps({"message": a.message, "conversationHistory": []}).encode()
        else:
            body = json.dumps({"model": "m1", "stream": True, "messages": [{"role": "user", "content": a.message}]}).encode()
        auth = ("Authorization: Bearer %s\r\n" % a.key) if a.key else ""
        request = ("POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n%s"
                   "Content-Length: %d\r\nConnection: close\r\n\r\n" % (u.path or "/", host, port, auth, len(body))).encode() + body
        targets.append((host, port, request))
    pids = a.pid or []

    loop = asyncio.get_running_loop()
    stats = {"inflight": 0, "peak_inflight": 0}
    recs = []
    idle = peak = None
    samples = []
    sampling = True

    def rss_all():
        vals = [rss_kb(p) for p in pids]
        return None if any(v is None for v in vals) else sum(vals)

    def cpu_all():
        vals = [cpu_s(p) for p in pids]
        return None if any(v is None for v in vals) else sum(vals)

    async def sampler():
        nonlocal peak
        while sampling:
            r = rss_all()
            if r is not None:
                peak = r if peak is None else max(peak, r)
                samples.append((time.monotonic(), r, stats["inflight"]))
            await asyncio.sleep(0.05)

    if pids:
        vals = []
        for _ in range(6):
            vals.append(rss_all())
            await asyncio.sleep(0.05)
        vals = [v for v in vals if v is not None]
        if not vals:
            sys.exit("load.py: no process %s" % pids)
        idle = sorted(vals)[len(vals) // 2]
        cpu0 = cpu_all()
        sampler_task = asyncio.create_task(sampler())
    self_cpu0 = resource.getrusage(resource.RUSAGE_SELF)

    async def one(target):
        host, port, request = target
        rec = Rec(time.monotonic())
        recs.append(rec)
        fut = loop.create_future()
        try:
            await loop.create_connection(lambda: Stream(rec, request, a.format, fut, stats), host, port)
            await asyncio.wait_for(fut, a.timeout)
        except (OSError, asyncio.TimeoutError) as e:
            rec.error = rec.error or ("%s: %s" % (type(e).__name__, e))

    async def worker(i):
        await asyncio.sleep(a.ramp_ms / 1000.0 * i / max(1, a.concurrency))
        for _ in range(a.rounds):
            await one(targets[i % len(targets)])

    t_start = time.monotonic()
    await asyncio.gather(*(worker(i) for i in range(a.concurrency)))
    wall = time.monotonic() - t_start
    self_cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    out = {"label": a.label, "url": a.url[0] if len(a.url) == 1 else a.url, "format": a.format, "concurrency": a.concurrency, "rounds": a.rounds,
           "tokens_expected": a.tokens, "delay_ms": a.delay_ms, "wall_s": wall}
    if pids:
        cpu1 = cpu_all()
        sampling = False
        await sampler_task
        await asyncio.sleep(1.0)
        out.update({"rss_idle_kb": idle, "rss_peak_kb": peak, "rss_after_kb": rss_all(),
                    "mem_per_stream_kb": (peak - idle) / a.concurrency,
                    "server_cpu_s": (cpu1 - cpu0) if cpu0 is not None and cpu1 is not None else None})
    ok = [r for r in recs if r.done and not r.error]
    failed = [r for r in recs if not (r.done and not r.error)]
    short = [r for r in ok if a.tokens and len(r.deltas) != a.tokens]
    deltas = sum(len(r.deltas) for r in ok)
    ttfb = [(r.t_body - r.t0) * 1000 for r in ok if r.t_body]
    first = [(r.deltas[0] - r.t0) * 1000 for r in ok if r.deltas]
    over = [((r.deltas[i] - r.deltas[i - 1]) * 1000 - a.delay_ms) for r in ok for i in range(1, len(r.deltas))]
    errors = {}
    for r in failed:
        errors[r.error or "incomplete"] = errors.get(r.error or "incomplete", 0) + 1
    out.update({
        "streams": len(recs), "completed": len(ok), "failed": len(failed), "wrong_token_count": len(short),
        "errors": dict(sorted(errors.items(), key=lambda kv: -kv[1])[:5]),
        "peak_inflight": stats["peak_inflight"],
        "streams_per_s": len(ok) / wall, "tokens_per_s": deltas / wall,
        "ttfb_ms_p50": pct(ttfb, 50), "ttfb_ms_p99": pct(ttfb, 99),
        "first_delta_ms_p50": pct(first, 50), "first_delta_ms_p99": pct(first, 99),
        "token_overhead_ms_p50": pct(over, 50), "token_overhead_ms_p99": pct(over, 99),
        "load_cpu_s": (self_cpu1.ru_utime + self_cpu1.ru_stime) - (self_cpu0.ru_utime + self_cpu0.ru_stime),
    })
    return out


def fmt(v, nd=1):
    return "-" if v is None else ("%.*f" % (nd, v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url", nargs="+", help="one server, or several replicas (streams go round-robin)")
    ap.add_argument("-c", "--concurrency", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--key")
    ap.add_argument("--pid", type=int, action="append", help="a server process to measure (repeat for replicas: summed)")
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--tokens", type=int, default=0, help="expected text deltas per stream (0: do not check)")
    ap.add_argument("--format", choices=["ui", "openai"], default="ui")
    ap.add_argument("--ramp-ms", type=float, default=200.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--label", default="")
    ap.add_argument("--message", default="How does greet work?", help="the question every stream asks")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = asyncio.run(run(a))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    print("%s: %d/%d streams ok (%d failed, %d with a wrong token count), peak %d open, wall %.2f s, %.1f streams/s, %.0f tokens/s"
          % (a.label or a.url[0], out["completed"], out["streams"], out["failed"], out["wrong_token_count"],
             out["peak_inflight"], out["wall_s"], out["streams_per_s"], out["tokens_per_s"]))
    print("  load generator CPU %.2f s" % out["load_cpu_s"])
    print("  TTFB p50/p99 %s/%s ms, first delta p50/p99 %s/%s ms, per-token overhead p50/p99 %s/%s ms"
          % (fmt(out["ttfb_ms_p50"]), fmt(out["ttfb_ms_p99"]), fmt(out["first_delta_ms_p50"]), fmt(out["first_delta_ms_p99"]),
             fmt(out["token_overhead_ms_p50"], 2), fmt(out["token_overhead_ms_p99"], 2)))
    if a.pid:
        print("  RSS idle %d KiB, peak %d KiB, after %s KiB: %.1f KiB per open stream; server CPU %.2f s"
              % (out["rss_idle_kb"], out["rss_peak_kb"], out["rss_after_kb"], out["mem_per_stream_kb"], out["server_cpu_s"] or 0))
    if out["errors"]:
        print("  errors:", out["errors"])
    sys.exit(0 if out["failed"] == 0 else 1)


if __name__ == "__main__":
    main()
