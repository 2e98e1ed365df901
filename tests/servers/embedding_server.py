#!/usr/bin/env python3
"""Embedding servers as they really behave, limits and errors included (stand-ins for model
servers that cannot run here). Prints "PORT <n>" first; exits when stdin closes.

--flavor picks whose behaviour, each with its own routes, limit report and error shapes
(taken from their sources and documentation):
  llama   llama.cpp llama-server with --embeddings: GET /props reports the slot's n_ctx
          (--ctx), but a BERT-style model's input must also fit the physical batch (--limit,
          n_ubatch), which /props does not report. Over it, the whole request fails: HTTP 500
          {"error": {"code": 500, "message": "input (N tokens) is too large to process. increase
          the physical batch size (current batch size: L)", "type": "server_error"}}; over n_ctx:
          400 exceed_context_size_error "input (N tokens) is larger than the max context size (C
          tokens). skipping". Routes: /v1/embeddings, /embeddings, /props, /health, /tokenize.
  ollama  Ollama: POST /api/show reports model_info["nomic-bert.context_length"] (--trained) and,
          with --num-ctx, "num_ctx N" in parameters; the effective limit is --limit. POST
          /api/embed ({"model", "input", "truncate"}; truncate defaults to true and cuts inputs
          silently; false: 400 {"error": "the input length exceeds the context length"}) answers
          {"model", "embeddings", "prompt_eval_count"}. POST /v1/embeddings (the OpenAI route)
          never truncates: 400 {"error": {"message": "the input length exceeds the context
          length", "type": "api_error"}}. Unknown model: 404 {"error": "model \"x\" not found, try
          pulling it first"}. Other routes: 404 text "404 page not found".
  openai  OpenAI: 8192-token inputs (--limit), 2048 inputs and 300000 tokens (--max-request-tokens)
          per request; 400 invalid_request_error "This model's maximum context length is 8192
          tokens, however you requested N tokens (N in your prompt; 0 for the completion). Please
          reduce your prompt; or completion length." Other routes: 404 "Invalid URL".
  vllm    vLLM: GET /v1/models lists max_model_len (--limit); over it 400 {"error": {"message":
          "This model's maximum context length is L tokens. However, you requested N tokens in the
          input for embedding generation. Please reduce the length of the input.", "type":
          "BadRequestError", "code": 400}} (vLLM before 0.10 put these fields at the top level;
          pilotfish reads both).
  tei     text-embeddings-inference: GET /info reports max_input_length (--limit) and
          max_client_batch_size (--max-batch); over the batch size 422 {"error": "batch size B >
          maximum allowed batch size M", "error_type": "Validation"}; an input over the limit 413
          {"error": "Input validation error: `inputs` must have less than L tokens. Given: N",
          "error_type": "Validation"}.
Every flavor answers an input containing --fail-on TEXT (if given) by failing the whole request:
500 for llama and ollama (their tokenizer or runner failing), 400 for the others.
--script FILE: a JSON list of {"status", "headers", "body"} answers given to the next embedding
requests, in order, before normal answers (rate limits, overload).
Every OpenAI route honours "encoding_format": "base64" (little-endian float32, as the `openai`
npm client asks by default).
--log FILE: one JSON line per embedding request: {"path", "inputs", "tokens": [per input], "status"}.

Tokens: runs of up to 4 letters, single digits and single other non-space characters, plus two
special tokens per input ([CLS] and [SEP]) for llama, ollama and tei; so prose is ~3.5 characters
a token and punctuation-dense code ~1.
"""
import argparse, base64, json, os, re, struct, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openai_server import embed  # noqa: E402  (the same deterministic word-hash vectors)

TOKEN = re.compile(r"[A-Za-z]{1,4}|[0-9]|[^\sA-Za-z0-9]")


def tokens(text, flavor):
    return TOKEN.findall(text), (2 if flavor in ("llama", "ollama", "tei") else 0)


def count(text, flavor):
    t, special = tokens(text, flavor)
    return len(t) + special


def truncate(text, limit, flavor):
    """The longest prefix of text that fits limit tokens."""
    special = 2 if flavor in ("llama", "ollama", "tei") else 0
    n = 0
    for m in TOKEN.finditer(text):
        n += 1
        if n + special > limit:
            return text[:m.start()]
    return text


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=None, text=False):
        data = (body if text else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def not_found(self):
        f = self.server.a.flavor
        if f == "llama":
            self.reply(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
        elif f == "ollama":
            self.reply(404, "404 page not found", text=True)
        elif f == "openai":
            self.reply(404, {"error": {"message": "Invalid URL (%s %s)" % (self.command, self.path),
                                       "type": "invalid_request_error", "param": None, "code": None}})
        elif f == "vllm":
            self.reply(404, {"detail": "Not Found"})
        else:
            self.reply(404, {"error": "Not Found", "error_type": "NotFound"})

    def do_GET(self):
        a, path = self.server.a, self.path.rstrip("/")
        if a.flavor == "llama" and path == "/props":
            self.reply(200, {"default_generation_settings": {"n_ctx": a.ctx or a.limit, "params": {}},
                             "total_slots": 1, "model_path": "/models/tiny-bert.gguf",
                             "build_info": "b0000-test"})
        elif a.flavor == "llama" and path == "/health":
            self.reply(200, {"status": "ok"})
        elif a.flavor == "vllm" and path == "/v1/models":
            self.reply(200, {"object": "list", "data": [{"id": a.model, "object": "model",
                                                         "owned_by": "vllm", "max_model_len": a.limit}]})
        elif a.flavor in ("openai", "ollama", "llama") and path == "/v1/models":
            self.reply(200, {"object": "list", "data": [{"id": a.model, "object": "model"}]})
        elif a.flavor == "tei" and path == "/info":
            self.reply(200, {"model_id": a.model, "model_type": {"embedding": {"pooling": "cls"}},
                             "max_input_length": a.limit, "max_client_batch_size": a.max_batch,
                             "max_batch_tokens": 16384, "version": "1.5.0"})
        else:
            self.not_found()

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            return None

    def do_POST(self):
        a, path, body = self.server.a, self.path.rstrip("/"), self.body()
        if a.flavor == "ollama" and path == "/api/show":
            if not isinstance(body, dict) or body.get("model", body.get("name")) != a.model:
                return self.reply(404, {"error": "model '%s' not found" % (body or {}).get("model")})
            show = {"modelfile": "FROM /models/%s" % a.model, "details": {"family": "nomic-bert"},
                    "model_info": {"general.architecture": "nomic-bert",
                                   "nomic-bert.context_length": a.trained or a.limit,
                                   "nomic-bert.embedding_length": 64}}
            if a.num_ctx:
                show["parameters"] = "num_ctx                        %d" % a.num_ctx
            return self.reply(200, show)
        if a.flavor == "llama" and path == "/tokenize":
            text = (body or {}).get("content", "")
            return self.reply(200, {"tokens": list(range(count(text, "llama") - 2))})
        routes = {"llama": ("/v1/embeddings", "/embeddings"), "ollama": ("/v1/embeddings", "/api/embed"),
                  "openai": ("/v1/embeddings",), "vllm": ("/v1/embeddings",), "tei": ("/v1/embeddings",)}
        if path not in routes[a.flavor]:
            return self.not_found()
        self.embeddings(a, path, body)

    def log_request_line(self, path, inputs, status):
        if self.server.a.log:
            with self.server.lock, open(self.server.a.log, "a") as f:
                f.write(json.dumps({"path": path, "inputs": len(inputs),
                                    "tokens": [count(t, self.server.a.flavor) for t in inputs],
                                    "status": status}) + "\n")

    def embeddings(self, a, path, body):
        f = a.flavor
        native = path == "/api/embed"
        if not isinstance(body, dict) or "input" not in body:
            return self.reply(400, {"error": {"message": "'input' is a required property",
                                              "type": "invalid_request_error"}})
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if not all(isinstance(t, str) for t in inputs):
            return self.reply(400, {"error": {"message": "'input' must be strings", "type": "invalid_request_error"}})
        with self.server.lock:
            scripted = self.server.script.pop(0) if self.server.script else None
        if scripted:
            self.log_request_line(path, inputs, scripted.get("status", 200))
            return self.reply(scripted.get("status", 200), scripted.get("body", {}), scripted.get("headers"))
        if f == "ollama" and body.get("model") != a.model:
            self.log_request_line(path, inputs, 404)
            return self.reply(404, {"error": 'model "%s" not found, try pulling it first' % body.get("model")})
        status, err = 200, None
        counts = [count(t, f) for t in inputs]
        if a.fail_on and any(a.fail_on in t for t in inputs):
            status = 500 if f in ("llama", "ollama") else 400
            err = "failed to process input"
        elif f == "tei" and len(inputs) > a.max_batch:
            status, err = 422, "batch size %d > maximum allowed batch size %d" % (len(inputs), a.max_batch)
        elif f == "openai" and len(inputs) > 2048:
            status, err = 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
        elif f == "openai" and sum(counts) > a.max_request_tokens:
            status, err = 400, "Requested %d tokens, max %d tokens per request" % (sum(counts), a.max_request_tokens)
        else:
            for i, n in enumerate(counts):
                if n <= a.limit:
                    continue
                if native and body.get("truncate", True):
                    inputs[i] = truncate(inputs[i], a.limit, f)
                    continue
                if f == "llama" and n > (a.ctx or a.limit):
                    status, err = 400, "input (%d tokens) is larger than the max context size (%d tokens). skipping" % (n, a.ctx or a.limit)
                elif f == "llama":
                    status, err = 500, "input (%d tokens) is too large to process. increase the physical batch size (current batch size: %d)" % (n, a.limit)
                elif f == "ollama":
                    status, err = 400, "the input length exceeds the context length"
                elif f == "openai":
                    status, err = 400, ("This model's maximum context length is %d tokens, however you requested %d tokens "
                                        "(%d in your prompt; 0 for the completion). Please reduce your prompt; or completion length."
                                        % (a.limit, n, n))
                elif f == "vllm":
                    status, err = 400, ("This model's maximum context length is %d tokens. However, you requested %d tokens "
                                        "in the input for embedding generation. Please reduce the length of the input." % (a.limit, n))
                else:
                    status, err = 413, "Input validation error: `inputs` must have less than %d tokens. Given: %d" % (a.limit, n)
                break
        self.log_request_line(path, inputs, status)
        if err is not None:
            if f == "llama":
                t = {400: "exceed_context_size_error", 500: "server_error"}.get(status, "invalid_request_error")
                return self.reply(status, {"error": {"code": status, "message": err, "type": t}})
            if f == "ollama":
                if native:
                    return self.reply(status, {"error": err})
                return self.reply(status, {"error": {"message": err, "type": "api_error", "param": None, "code": None}})
            if f == "vllm":
                return self.reply(status, {"error": {"message": err, "type": "BadRequestError",
                                                     "param": None, "code": status}})
            if f == "tei":
                return self.reply(status, {"error": err, "error_type": "Validation"})
            return self.reply(status, {"error": {"message": err, "type": "invalid_request_error", "param": None, "code": None}})
        total = sum(count(t, f) for t in inputs)
        vectors = [embed(t) for t in inputs]
        if native:
            return self.reply(200, {"model": a.model, "embeddings": vectors, "total_duration": 1000,
                                    "load_duration": 10, "prompt_eval_count": total})
        if body.get("encoding_format") == "base64":
            vectors = [base64.b64encode(struct.pack("<%df" % len(v), *v)).decode() for v in vectors]
        self.reply(200, {"object": "list", "model": a.model,
                         "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                         "usage": {"prompt_tokens": total, "total_tokens": total}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flavor", choices=["llama", "ollama", "openai", "vllm", "tei"], required=True)
    ap.add_argument("--model", default="embed-small")
    ap.add_argument("--limit", type=int, default=512)
    ap.add_argument("--ctx", type=int, default=0)
    ap.add_argument("--trained", type=int, default=0)
    ap.add_argument("--num-ctx", type=int, default=0)
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--max-request-tokens", type=int, default=300000)
    ap.add_argument("--fail-on")
    ap.add_argument("--script")
    ap.add_argument("--log")
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.a = a
    server.script = json.load(open(a.script)) if a.script else []
    server.lock = threading.Lock()
    server.daemon_threads = True
    print("PORT", server.server_address[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
