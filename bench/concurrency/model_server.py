#!/usr/bin/env python3
"""The model for bench/concurrency: an OpenAI-compatible streaming chat server on asyncio (one
thread, callbacks only) that holds thousands of simultaneous streams cheaply, so that the harness
is not what limits the servers under test.

POST /v1/chat/completions answers every request, whatever its messages, with TOKENS text tokens
("tok0 ", "tok1 ", ...) in OpenAI's chat.completion.chunk SSE format: the first token --ttft-ms
after the request, then one every --delay-ms, then a chunk with finish_reason "stop" and
data: [DONE]; then it closes the connection. A client that goes away ends its stream early.
GET /v1/models lists the model. Prints "PORT <n>" first; --port picks the port (default: any).
On SIGTERM/SIGINT it prints how many streams it served to stderr and exits.

usage: model_server.py [--tokens 50] [--delay-ms 20] [--ttft-ms DELAY] [--port 0]
"""
import argparse, asyncio, json, signal, sys


def chunk(model, delta, finish=None):
    return ("data: " + json.dumps({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
                                   "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]},
                                  separators=(",", ":")) + "\n\n").encode()


class Config:
    def __init__(self, tokens, delay, ttft):
        self.tokens, self.delay, self.ttft = tokens, delay, ttft
        self.served = 0
        self.cache = {}

    def script(self, model):
        """The encoded chunks of one answer (the same for every request to a model)."""
        if model not in self.cache:
            toks = [chunk(model, {"role": "assistant", "content": "tok0 "} if i == 0 else {"content": "tok%d " % i})
                    for i in range(self.tokens)]
            toks.append(chunk(model, {}, "stop") + b"data: [DONE]\n\n")
            self.cache[model] = toks
        return self.cache[model]


class Conn(asyncio.Protocol):
    def __init__(self, cfg):
        self.cfg = cfg
        self.buf = b""
        self.transport = None
        self.streaming = False

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        if self.streaming:
            return
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = self.buf[:end].decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v)
        if len(self.buf) < end + 4 + length:
            return
        body = self.buf[end + 4:end + 4 + length]
        self.buf = self.buf[end + 4 + length:]
        try:
            method, target, _ = lines[0].split(" ", 2)
        except ValueError:
            return self.reply(400, {"error": {"message": "bad request line"}})
        path = target.split("?")[0].rstrip("/")
        if method == "POST" and path.endswith("/chat/completions"):
            try:
                model = json.loads(body).get("model", "m1")
            except (ValueError, AttributeError):
                return self.reply(400, {"error": {"message": "body is not a JSON object"}})
            self.streaming = True
            self.chunks = self.cfg.script(str(model))
            self.i = 0
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                                 b"Connection: close\r\n\r\n")
            asyncio.get_running_loop().call_later(self.cfg.ttft, self.step)
        elif method == "GET" and path.endswith("/models"):
            self.reply(200, {"object": "list", "data": [{"id": "m1", "object": "model"}]})
        else:
            self.reply(404, {"error": {"message": "no route " + target}})

    def step(self):
        if self.transport.is_closing():
            return
        self.transport.write(self.chunks[self.i])
        self.i += 1
        if self.i == len(self.chunks):
            self.cfg.served += 1
            self.transport.close()
        else:
            asyncio.get_running_loop().call_later(self.cfg.delay, self.step)

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.transport.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                             % (status, len(data)) + data)
        self.transport.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=50)
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--ttft-ms", type=float)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    cfg = Config(a.tokens, a.delay_ms / 1000.0, (a.ttft_ms if a.ttft_ms is not None else a.delay_ms) / 1000.0)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Conn(cfg), "127.0.0.1", a.port, backlog=4096)
    print("PORT", server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()
    print("model_server: served %d streams" % cfg.served, file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
