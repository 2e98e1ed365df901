#!/usr/bin/env python3
"""A forward proxy for the tests (stand-in for a corporate HTTP proxy).

Listens on 127.0.0.1 at an ephemeral port, printed as "PORT <n>" on the first line of stdout.
CONNECT host:port opens a tunnel (how HTTPS goes through a proxy); a request in absolute form
("GET http://host:port/path HTTP/1.1") is forwarded (how plain HTTP does). Each request line is
appended to --log FILE. --require-auth USER:PASS answers 407 unless Proxy-Authorization carries
them. Exits when its stdin closes.
"""
import argparse, base64, select, socket, sys, threading
from urllib.parse import urlsplit


def pump(a, b):
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 30)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def handle(conn, args):
    try:
        head, rest = read_head(conn)
        if head is None:
            return
        lines = head.split("\r\n")
        with open(args.log, "a") as f:
            f.write(lines[0] + "\n")
        headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
        if args.require_auth:
            want = "Basic " + base64.b64encode(args.require_auth.encode()).decode()
            if headers.get("proxy-authorization") != want:
                conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
                return
        method, target, _ = lines[0].split(" ", 2)
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            pump(conn, upstream)
            return
        u = urlsplit(target)
        upstream = socket.create_connection((u.hostname, u.port or 80))
        path = u.path + ("?" + u.query if u.query else "")
        kept = [l for l in lines[1:] if not l.lower().startswith("proxy-")]
        upstream.sendall(("%s %s HTTP/1.1\r\n" % (method, path) + "\r\n".join(kept) + "\r\n\r\n").encode("latin-1") + rest)
        pump(conn, upstream)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--require-auth")
    args = ap.parse_args()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("PORT", listener.getsockname()[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), listener.close()), daemon=True).start()
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(conn, args), daemon=True).start()


if __name__ == "__main__":
    main()
