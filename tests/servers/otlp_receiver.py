#!/usr/bin/env python3
"""An OpenTelemetry collector's OTLP/HTTP trace receiver for the tests (stand-in for
otel-collector's otlphttp receiver, or a hosted one such as Honeycomb's).

POST /v1/traces takes an ExportTraceServiceRequest in OTLP/JSON (Content-Type application/json;
Content-Encoding gzip allowed), checked as the collector's JSON unmarshaler does: trace ids of 32
hex digits and span ids of 16 (not all zero), times as decimal strings or integers, kinds 0-5,
typed attribute values, status codes 0-2. Answers 200 with an ExportTraceServiceResponse ({} or,
for spans named by --reject-name, partialSuccess {rejectedSpans, errorMessage}); a body it cannot
read gets 400 with a google.rpc.Status JSON {"code": 3, "message": ...}; another content type 415;
a missing or wrong --header 401; anything else 404. Proven faithful by the real
@opentelemetry/exporter-trace-otlp-http (tests/node/otlp_exporter.mjs).

Control: GET /spans -> {"spans": [...]} every span taken so far, flattened: traceId, spanId,
parentSpanId, name, kind, start, end (integers), attributes {key: value}, status {code, message},
resource {key: value}, scope; "requests": how many exports came; DELETE /spans forgets them.

Listens on 127.0.0.1 at an ephemeral port, printed as "PORT <n>" on the first line of stdout.
Exits when its stdin closes. Options: --header NAME=VALUE (required on every export),
--reject-name NAME, --status N (answer every export with HTTP N, for failure tests).
"""
import argparse, gzip, json, re, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HEX = re.compile(r"^[0-9a-fA-F]*$")


class Bad(Exception):
    pass


def hex_id(v, n, what, optional=False):
    if v is None or v == "":
        if optional:
            return ""
        raise Bad("%s is missing" % what)
    if not isinstance(v, str) or len(v) != n or not HEX.match(v):
        raise Bad("%s must be %d hex digits, got %r" % (what, n, v))
    if set(v) == {"0"}:
        raise Bad("%s is all zero" % what)
    return v.lower()


def nanos(v, what):
    if isinstance(v, bool):
        raise Bad("%s must be a number" % what)
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.isdigit():
        return int(v)
    raise Bad("%s must be an integer or a decimal string, got %r" % (what, v))


def any_value(v, what):
    if not isinstance(v, dict) or len(v) > 1:
        raise Bad("%s must be an AnyValue object" % what)
    if not v:
        return None
    (k, x), = v.items()
    if k == "stringValue":
        if not isinstance(x, str):
            raise Bad("%s.stringValue must be a string" % what)
        return x
    if k == "boolValue":
        if not isinstance(x, bool):
            raise Bad("%s.boolValue must be true or false" % what)
        return x
    if k == "intValue":
        if isinstance(x, bool) or not (isinstance(x, int) or (isinstance(x, str) and re.match(r"^-?\d+$", x))):
            raise Bad("%s.intValue must be an integer" % what)
        return int(x)
    if k == "doubleValue":
        if isinstance(x, bool) or not isinstance(x, (int, float, str)):
            raise Bad("%s.doubleValue must be a number" % what)
        return float(x)
    if k == "arrayValue":
        return [any_value(e, what + "[]") for e in (x or {}).get("values", [])]
    if k == "kvlistValue":
        return attributes((x or {}).get("values", []), what)
    if k == "bytesValue":
        return x
    raise Bad("%s has an unknown value type %s" % (what, k))


def attributes(lst, what):
    if lst is None:
        return {}
    if not isinstance(lst, list):
        raise Bad("%s.attributes must be a list" % what)
    out = {}
    for a in lst:
        if not isinstance(a, dict) or not isinstance(a.get("key"), str):
            raise Bad("%s: an attribute needs a string key" % what)
        out[a["key"]] = any_value(a.get("value", {}), what + "." + a["key"])
    return out


def decode(body):
    if not isinstance(body, dict):
        raise Bad("the request must be an object")
    spans = []
    for rs in body.get("resourceSpans") or []:
        resource = attributes((rs.get("resource") or {}).get("attributes"), "resource")
        for ss in rs.get("scopeSpans") or []:
            scope = (ss.get("scope") or {}).get("name", "")
            for s in ss.get("spans") or []:
                if not isinstance(s, dict):
                    raise Bad("a span must be an object")
                name = s.get("name")
                if not isinstance(name, str) or not name:
                    raise Bad("a span needs a name")
                kind = s.get("kind", 0)
                if isinstance(kind, str):
                    kinds = ["SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
                             "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"]
                    if kind not in kinds:
                        raise Bad("unknown span kind %r" % kind)
                    kind = kinds.index(kind)
                if not isinstance(kind, int) or isinstance(kind, bool) or not 0 <= kind <= 5:
                    raise Bad("span kind must be 0-5, got %r" % kind)
                status = s.get("status") or {}
                code = status.get("code", 0)
                if isinstance(code, str):
                    code = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, -1)
                if code not in (0, 1, 2):
                    raise Bad("status code must be 0-2")
                spans.append({
                    "traceId": hex_id(s.get("traceId"), 32, "traceId"),
                    "spanId": hex_id(s.get("spanId"), 16, "spanId"),
                    "parentSpanId": hex_id(s.get("parentSpanId"), 16, "parentSpanId", True),
                    "name": name, "kind": kind,
                    "start": nanos(s.get("startTimeUnixNano"), "startTimeUnixNano"),
                    "end": nanos(s.get("endTimeUnixNano"), "endTimeUnixNano"),
                    "attributes": attributes(s.get("attributes"), name),
                    "status": {"code": code, "message": status.get("message", "")},
                    "resource": resource, "scope": scope,
                })
    return spans


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("--reject-name", default="")
    ap.add_argument("--status", type=int, default=0)
    args = ap.parse_args()
    required = [h.split("=", 1) for h in args.header]
    lock = threading.Lock()
    state = {"spans": [], "requests": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path != "/spans":
                return self.answer(404, {"code": 5, "message": "not found"})
            with lock:
                return self.answer(200, {"spans": state["spans"], "requests": state["requests"]})

        def do_DELETE(self):
            with lock:
                state["spans"] = []
                state["requests"] = 0
            return self.answer(200, {})

        def do_POST(self):
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                raw = b""
                while True:  # chunked, as Node's http client sends a body of unknown length
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        break
                    raw += self.rfile.read(size)
                    self.rfile.readline()
            else:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path != "/v1/traces":
                return self.answer(404, {"code": 5, "message": "not found"})
            with lock:
                state["requests"] += 1
            for k, v in required:
                if self.headers.get(k) != v:
                    return self.answer(401, {"code": 16, "message": "missing or wrong %s" % k})
            if args.status:
                return self.answer(args.status, {"code": 14, "message": "scripted failure"})
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return self.answer(415, {"code": 3, "message": "unsupported content type %s" % ctype})
            try:
                if (self.headers.get("Content-Encoding") or "") == "gzip":
                    raw = gzip.decompress(raw)
                spans = decode(json.loads(raw.decode("utf-8")))
            except (Bad, ValueError, UnicodeDecodeError, OSError) as e:
                return self.answer(400, {"code": 3, "message": str(e)})
            rejected = [s for s in spans if args.reject_name and s["name"] == args.reject_name]
            with lock:
                state["spans"].extend(s for s in spans if s not in rejected)
            if rejected:
                return self.answer(200, {"partialSuccess": {"rejectedSpans": str(len(rejected)),
                                                            "errorMessage": "rejected by name"}})
            return self.answer(200, {})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
