#!/usr/bin/env python3
"""A git server over HTTP for the tests (stand-in for GitHub or GitLab serving a repository).

Serves the bare repositories under ROOT with git's own smart HTTP protocol: each request runs
`git http-backend` as a CGI program, as a real git server's web front does (protocol v2 passed
through, gzip and chunked request bodies handled by http-backend and here). Listens on 127.0.0.1
at an ephemeral port, printed as "PORT <n>" on the first line of stdout. --token T answers 401
(with WWW-Authenticate) unless the request carries `Authorization: Basic
base64(x-access-token:T)`, as GitHub takes a token over HTTPS. Each request is appended to --log
FILE as one line: "METHOD PATH auth=yes|no status". Exits when its stdin closes.
"""
import argparse, base64, os, subprocess, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--token", default="")
    ap.add_argument("--log", default="")
    args = ap.parse_args()
    expected = "Basic " + base64.b64encode(("x-access-token:" + args.token).encode()).decode()
    log_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def note(self, status):
            if not args.log:
                return
            auth = "yes" if self.headers.get("Authorization") else "no"
            with log_lock, open(args.log, "a") as f:
                f.write(f"{self.command} {urlsplit(self.path).path} auth={auth} {status}\n")

        def body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def handle_any(self):
            data = self.body() if self.command == "POST" else b""
            if args.token and self.headers.get("Authorization") != expected:
                self.note(401)
                msg = b"Authentication required\n"
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)
                return
            url = urlsplit(self.path)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                   "GIT_PROJECT_ROOT": args.root, "GIT_HTTP_EXPORT_ALL": "1",
                   "REQUEST_METHOD": self.command, "PATH_INFO": url.path,
                   "QUERY_STRING": url.query, "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                   "CONTENT_LENGTH": str(len(data))}
            if self.headers.get("Content-Encoding"):
                env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            out = subprocess.run(["git", "http-backend"], input=data, env=env,
                                 capture_output=True).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            if not _:
                head, _, payload = out.partition(b"\n\n")
            status, headers = 200, []
            for line in head.decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.note(status)
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = handle_any
        do_POST = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
