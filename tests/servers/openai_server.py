#!/usr/bin/env python3
"""A scripted OpenAI-compatible test server (stand-in for hosted model APIs in the tests).

Serves POST /v1/embeddings and GET /v1/models on 127.0.0.1 at an ephemeral port, printed as
"PORT <n>" on the first line of stdout. Embeddings are deterministic: each lower-cased word of
the input (and each camelCase/snake part) adds 1 to dimension hash(word) % DIM, so texts that
share words are similar, as with a real model.

--script FILE is a JSON list of actions consumed one per request, before normal answers:
  {"status": 429, "headers": {"Retry-After": "0"}, "body": {...}}  answer with this status/body
  {"drop": true}                                                     close the connection unanswered
  {"delay": 2.5}                                                     wait, then answer normally
  {"garbage": true}                                                  answer 200 with a non-JSON body
  {"flood": {"status": 200, "mib": 40}}     answer with that status, then send that many MiB of
                                            'x' with no line end (until the client hangs up;
                                            an event counts 64 KiB chunks)
  {"chat": {"text": ["Hel", "lo"], "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}],
            "finish": "stop", "drop_after": 1, "delay_first": 0.5}}
                                                     stream this chat answer (tool-call names and
                                                     arguments are sent in fragments); drop_after
                                                     closes the stream after that many chunks;
                                                     "chunk_delay": 0.1 waits that long between chunks;
                                                     "error_message": "..." ends the stream with an
                                                     error object instead of a finish chunk;
                                                     "chunked": true sends the body in chunked
                                                     transfer encoding (a drop then cuts it mid-body)
  An action with "match": "TEXT" is taken only by a chat request (/chat/completions, /messages)
  one of whose user messages contains TEXT; actions without "match" go to any request, in order.
POST /v1/chat/completions without a scripted answer streams "You said: <last user message>".
POST /v1/messages answers the same way in the Anthropic Messages API's stream format ("thinking":
["..."] streams a signed thinking block first, and extended thinking's request rules are checked:
a budget of at least 1,024 under max_tokens, no temperature or forced tool choice, and an assistant
message with tool_use that starts with its thinking block) (this is
also the stand-in for Anthropic's API; "error_event" in a chat script sends an error event).
--log FILE appends one JSON line per request: {"path", "auth", "body"}.
--events FILE appends one JSON line per streamed chat answer when it ends: {"event": "stream completed"
or "client disconnected", "path", "match", "chunks_sent", "chunks_total", "time"}.
--require-key K answers 401 unless the request carries "Authorization: Bearer K".
--tls-cert FILE --tls-key FILE serve HTTPS instead of HTTP.
--models A,B is what GET /v1/models lists (default: embed-small).
POST /v1/responses is the Responses API (stream: true): "input" items (messages with
input_text/input_image/output_text parts, function_call and function_call_output items, each
output naming an earlier call), flat function tools, and the named events of its stream
(response.created, output_item.added/done, output_text.delta, function_call_arguments.delta/done,
response.completed, or response.incomplete for finish "length" and response.failed for
"error_message"); a chat script's "reasoning" streams reasoning summary deltas.
Azure OpenAI's routes take the same scripts: POST /openai/deployments/{d}/chat/completions and
/openai/responses, GET /openai/models, each needing ?api-version= (else 404 "Resource not found")
and, with --require-key, the key in an "api-key" header (else 401, as Azure words it).
Images in user messages are checked as the APIs check them: OpenAI's content parts ({"type":
"text"} or {"type": "image_url", "image_url": {"url": "data:image/...;base64,..."}}) and
Anthropic's image blocks ({"type": "image", "source": {"type": "base64", "media_type", "data"}})
must carry valid base64 of a PNG, JPEG, GIF or WebP of the type they name, else a 400.
"""
import argparse, base64, binascii, hashlib, json, re, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 64

MAGIC = {"image/png": [b"\x89PNG\r\n\x1a\n"], "image/jpeg": [b"\xff\xd8\xff"],
         "image/gif": [b"GIF87a", b"GIF89a"], "image/webp": [b"RIFF"]}


def image_problem(media_type, data):
    """Why an image would be refused (None when it is fine), as the APIs phrase it."""
    if media_type not in MAGIC:
        return "Invalid image media type %r: expected image/png, image/jpeg, image/gif or image/webp" % media_type
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return "Invalid base64 image data"
    if not any(raw.startswith(m) for m in MAGIC[media_type]) or (media_type == "image/webp" and raw[8:12] != b"WEBP"):
        return "Image does not match the provided media type %s" % media_type
    return None


def openai_image_problem(messages):
    for m in messages:
        c = m.get("content") if isinstance(m, dict) else None
        if not isinstance(c, list):
            continue
        for part in c:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if kind != "image_url":
                return "Invalid content part type %r" % kind
            url = (part.get("image_url") or {}).get("url", "")
            found = re.match(r"data:([^;]+);base64,(.*)$", url, re.S)
            if not found:
                return "Invalid image_url: expected a data URL"
            problem = image_problem(found.group(1), found.group(2))
            if problem:
                return "You uploaded an unsupported image. " + problem
    return None


def responses_problem(body):
    """Why the Responses API would refuse this body (None when it takes it)."""
    if not isinstance(body, dict):
        return "The request body must be a JSON object"
    if "messages" in body:
        return "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'."
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return "Missing required parameter: 'input'."
    calls = set()
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            return "Invalid type for 'input[%d]': expected an object." % i
        kind = it.get("type", "message")
        if kind == "function_call":
            if not all(isinstance(it.get(k), str) for k in ("call_id", "name", "arguments")):
                return "Missing required parameter: 'input[%d].call_id', 'name' or 'arguments'." % i
            calls.add(it["call_id"])
        elif kind == "function_call_output":
            if it.get("call_id") not in calls:
                return "No tool call found for function call output with call_id %s." % it.get("call_id")
            if not isinstance(it.get("output"), str):
                return "Invalid type for 'input[%d].output': expected a string." % i
        elif kind == "message":
            if it.get("role") not in ("user", "assistant", "system", "developer"):
                return "Invalid value for 'input[%d].role'." % i
            content = it.get("content")
            if isinstance(content, str):
                continue
            if not isinstance(content, list):
                return "Invalid type for 'input[%d].content'." % i
            for part in content:
                t = part.get("type") if isinstance(part, dict) else None
                if t not in ("input_text", "input_image", "output_text"):
                    return ("Invalid value: '%s'. Supported values are: 'input_text', 'input_image', "
                            "'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'." % t)
                if t == "input_image":
                    found = re.match(r"data:([^;]+);base64,(.*)$", part.get("image_url", ""), re.S)
                    problem = image_problem(found.group(1), found.group(2)) if found else "Invalid image_url"
                    if problem:
                        return problem
        else:
            return "Invalid value for 'input[%d].type': '%s'." % (i, kind)
    for i, t in enumerate(body.get("tools") or []):
        if not isinstance(t, dict) or t.get("type") != "function" or not isinstance(t.get("name"), str):
            return "Missing required parameter: 'tools[%d].name'." % i
    effort = (body.get("reasoning") or {}).get("effort")
    if effort is not None and effort not in ("minimal", "low", "medium", "high", "xhigh"):
        return "Invalid value: '%s'. Supported values are: 'minimal', 'low', 'medium', 'high' and 'xhigh'." % effort
    return None


def anthropic_image_problem(messages):
    for i, m in enumerate(messages):
        c = m.get("content") if isinstance(m, dict) else None
        if not isinstance(c, list):
            continue
        for j, block in enumerate(c):
            if isinstance(block, dict) and block.get("type") == "image":
                src = block.get("source") or {}
                problem = "source.type must be base64" if src.get("type") != "base64" else \
                    image_problem(src.get("media_type"), src.get("data", ""))
                if problem:
                    return "messages.%d.content.%d.image.source: %s" % (i, j, problem)
    return None


def words(text):
    out = []
    for w in re.findall(r"[A-Za-z0-9_]+", text):
        out.append(w.lower())
        parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", w)
        out.extend(p.lower() for p in parts if len(parts) > 1)
    return out


def embed(text):
    v = [0.0] * DIM
    for w in words(text):
        v[int(hashlib.sha1(w.encode()).hexdigest(), 16) % DIM] += 1.0
    if not any(v):
        v[0] = 1.0
    return v


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def flood(self, spec):
        self.close_connection = True
        self.send_response(spec.get("status", 200))
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        block = b"data: " + b"x" * (64 * 1024 - 6)
        total = int(spec.get("mib", 40)) * 16
        sent = 0
        try:
            for _ in range(total):
                self.wfile.write(block)
                self.wfile.flush()
                sent += 1
                block = b"x" * (64 * 1024)
        except (BrokenPipeError, ConnectionResetError):
            self.event("client disconnected", None, sent, total)
            return
        self.event("stream completed", None, sent, total)

    def record(self, body):
        if self.server.log:
            with self.server.lock, open(self.server.log, "a") as f:
                f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization"),
                                    "body": body}) + "\n")

    def next_action(self, body):
        users = []
        conversation = body.get("messages") if isinstance(body, dict) else None
        if isinstance(body, dict) and self.route().endswith("/responses"):
            given = body.get("input")
            conversation = given if isinstance(given, list) else [{"role": "user", "content": given}]
        if isinstance(conversation, list) and not self.path.rstrip("/").endswith("/embeddings"):
            for m in conversation:
                if isinstance(m, dict) and m.get("role") == "user":
                    c = m.get("content")
                    users.append(c if isinstance(c, str) else json.dumps(c))
        with self.server.lock:
            for i, action in enumerate(self.server.script):
                if "match" not in action or any(action["match"] in u for u in users):
                    return self.server.script.pop(i)
            return None

    def event(self, name, match, sent, total):
        if self.server.events:
            with self.server.lock, open(self.server.events, "a") as f:
                f.write(json.dumps({"event": name, "path": self.path, "match": match, "chunks_sent": sent,
                                    "chunks_total": total, "time": time.time()}) + "\n")

    def route(self):
        return urllib.parse.urlsplit(self.path).path.rstrip("/")

    def azure_refusal(self):
        """Azure OpenAI's answer to a request it would not serve (None when it would)."""
        if not self.route().startswith("/openai/"):
            return None
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if not query.get("api-version"):
            return 404, {"error": {"code": "404", "message": "Resource not found"}}
        key = self.server.require_key
        if key and self.headers.get("api-key") != key and self.headers.get("Authorization") != "Bearer " + key:
            return 401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key or "
                                   "wrong API endpoint. Make sure to provide a valid key for an active "
                                   "subscription and use a correct regional API endpoint for your resource."}}
        return None

    def authorized(self):
        refusal = self.azure_refusal()
        if refusal:
            self.reply(*refusal)
            return False
        if self.route().startswith("/openai/"):
            return True
        key = self.server.require_key
        if key and self.headers.get("Authorization") != "Bearer " + key:
            self.reply(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
            return False
        return True

    def chat(self, body, script, match=None):
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self.reply(400, {"error": {"message": "'messages' is a required property"}})
            return
        problem = openai_image_problem(body["messages"])
        if problem:
            self.reply(400, {"error": {"message": problem, "type": "invalid_request_error"}})
            return
        if script is None:
            last = next((m.get("content") or "" for m in reversed(body["messages"]) if m.get("role") == "user"), "")
            script = {"text": ["You said: ", last], "finish": "stop"}
        # "reasoning": the thinking deltas servers such as vLLM and DeepSeek stream before the text.
        chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": t}}]}
                  for t in script.get("reasoning", [])]
        chunks += [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": t}}]} for t in script.get("text", [])]
        for i, call in enumerate(script.get("tool_calls", [])):
            args = call.get("arguments", "")
            half = len(args) // 2
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": i, "id": call.get("id", "call_%d" % i), "type": "function",
                 "function": {"name": call["name"], "arguments": args[:half]}}]}}]})
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": i, "function": {"arguments": args[half:]}}]}}]})
        if script.get("error_message"):  # a mid-stream error object instead of the finish chunk
            chunks.append({"error": {"message": script["error_message"], "type": "server_error"}})
        else:
            chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": script.get("finish", "stop")}]})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        chunked = bool(script.get("chunked"))  # as hosted APIs send it: a cut leaves the body partial
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        if script.get("delay_first"):
            time.sleep(script["delay_first"])
        drop_after = script.get("drop_after")

        def write(data):
            if data and chunked:
                data = b"%x\r\n" % len(data) + data + b"\r\n"
            self.wfile.write(data)

        n = 0
        try:
            for n, chunk in enumerate(chunks):
                if drop_after is not None and n >= drop_after:
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if n and script.get("chunk_delay"):
                    time.sleep(script["chunk_delay"])
                chunk.update({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body.get("model")})
                write(b": keep-alive\n\n" if n == 0 else b"")
                write(("data: " + json.dumps(chunk) + "\n\n").encode())
                self.wfile.flush()
            write(b"data: [DONE]\n\n")
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.event("client disconnected", match, n, len(chunks))
            return
        self.event("stream completed", match, len(chunks), len(chunks))

    def responses_api(self, body, script, match=None):
        problem = responses_problem(body)
        if problem:
            self.reply(400, {"error": {"message": problem, "type": "invalid_request_error"}})
            return
        if script is None:
            last = ""
            for it in body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]:
                if it.get("role") == "user":
                    c = it.get("content")
                    last = c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            script = {"text": ["You said: ", last], "finish": "stop"}
        rid, output, events = "resp_1", [], []
        events.append({"type": "response.created", "response": {"id": rid, "object": "response",
                                                                "status": "in_progress", "model": body.get("model"), "output": []}})
        index = 0
        if script.get("reasoning"):
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {"id": "rs_1", "type": "reasoning", "summary": []}})
            for t in script["reasoning"]:
                events.append({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
                               "output_index": index, "summary_index": 0, "delta": t})
            events.append({"type": "response.output_item.done", "output_index": index,
                           "item": {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "".join(script["reasoning"])}]}})
            index += 1
        if script.get("text"):
            text = "".join(script["text"])
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}})
            events.append({"type": "response.content_part.added", "item_id": "msg_1", "output_index": index,
                           "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})
            for t in script["text"]:
                events.append({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": index,
                               "content_index": 0, "delta": t})
            events.append({"type": "response.output_text.done", "item_id": "msg_1", "output_index": index,
                           "content_index": 0, "text": text})
            events.append({"type": "response.content_part.done", "item_id": "msg_1", "output_index": index,
                           "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}})
            item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
            events.append({"type": "response.output_item.done", "output_index": index, "item": item})
            output.append(item)
            index += 1
        for i, call in enumerate(script.get("tool_calls", [])):
            args, fid = call.get("arguments", ""), "fc_%d" % i
            cid = call.get("id", "call_%d" % i)
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {"id": fid, "type": "function_call", "status": "in_progress", "call_id": cid,
                                    "name": call["name"], "arguments": ""}})
            half = len(args) // 2
            for piece in (args[:half], args[half:]):
                events.append({"type": "response.function_call_arguments.delta", "item_id": fid,
                               "output_index": index, "delta": piece})
            events.append({"type": "response.function_call_arguments.done", "item_id": fid,
                           "output_index": index, "arguments": args})
            item = {"id": fid, "type": "function_call", "status": "completed", "call_id": cid,
                    "name": call["name"], "arguments": args}
            events.append({"type": "response.output_item.done", "output_index": index, "item": item})
            output.append(item)
            index += 1
        final = {"id": rid, "object": "response", "model": body.get("model"), "output": output,
                 "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
        if script.get("error_message"):
            final.update(status="failed", error={"code": "server_error", "message": script["error_message"]})
            events.append({"type": "response.failed", "response": final})
        elif script.get("finish") == "length":
            final.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
            events.append({"type": "response.incomplete", "response": final})
        else:
            final.update(status="completed")
            events.append({"type": "response.completed", "response": final})
        if not body.get("stream"):  # the whole response at once
            self.reply(500 if final["status"] == "failed" else 200, final)
            return
        for n, ev in enumerate(events):
            ev["sequence_number"] = n
        self.send_named_events([(ev["type"], ev) for ev in events], script, match)

    def send_named_events(self, events, script, match=None):
        """Streams (name, data) pairs as named server-sent events (the Responses and Messages APIs'
        form), honouring the script's drop_after and chunk_delay."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        drop_after = script.get("drop_after")
        n = 0
        try:
            for n, (name, data) in enumerate(events):
                if drop_after is not None and n >= drop_after:
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if n and script.get("chunk_delay"):
                    time.sleep(script["chunk_delay"])
                self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.event("client disconnected", match, n, len(events))
            return
        self.event("stream completed", match, len(events), len(events))

    def anthropic(self, body, script):
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "max_tokens" not in body:
            self.reply(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                         "message": "messages and max_tokens are required"}})
            return
        problem = anthropic_image_problem(body["messages"])
        if problem:
            self.reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}})
            return
        thinking = body.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") == "enabled":
            # Extended thinking's rules, as the API enforces them.
            budget = thinking.get("budget_tokens")
            problem = None
            if not isinstance(budget, int) or budget < 1024:
                problem = "thinking.budget_tokens: Input should be greater than or equal to 1024"
            elif budget >= body["max_tokens"]:
                problem = "`max_tokens` must be greater than `thinking.budget_tokens`"
            elif "temperature" in body or "top_k" in body:
                problem = "`temperature` may only be set to 1 when thinking is enabled"
            elif (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
                problem = "Thinking may not be enabled when tool_choice forces tool use."
            else:
                for m in body["messages"]:
                    content = m.get("content")
                    if m.get("role") == "assistant" and isinstance(content, list) and \
                            any(b.get("type") == "tool_use" for b in content) and \
                            content[0].get("type") not in ("thinking", "redacted_thinking"):
                        problem = ("messages: Expected `thinking` or `redacted_thinking`, but found `%s`. When "
                                   "`thinking` is enabled, a final `assistant` message must start with a thinking block"
                                   % content[0].get("type"))
            if problem:
                self.reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}})
                return
        if script is None:
            last = ""
            for m in reversed(body["messages"]):
                if m.get("role") == "user" and isinstance(m.get("content"), str):
                    last = m["content"]
                    break
            script = {"text": ["You said: ", last], "finish": "stop"}
        events = [("message_start", {"type": "message_start", "message": {"id": "msg_1", "role": "assistant",
                                                                           "content": [], "model": body.get("model")}})]
        index = 0
        if script.get("thinking"):
            events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "thinking", "thinking": ""}}))
            for t in script["thinking"]:
                events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                       "delta": {"type": "thinking_delta", "thinking": t}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "signature_delta", "signature": "sig-" + str(len(script["thinking"]))}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
            index = 1
        if script.get("text"):
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("ping", {"type": "ping"}))
            for t in script["text"]:
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": t}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        for call in script.get("tool_calls", []):
            args = call.get("arguments", "{}")
            half = len(args) // 2
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "tool_use", "id": call.get("id", "toolu_%d" % index),
                                                                     "name": call["name"], "input": {}}}))
            for part in (args[:half], args[half:]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta", "partial_json": part}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        if script.get("error_event"):
            events.append(("error", {"type": "error", "error": {"type": script["error_event"], "message": "Overloaded"}}))
        stop = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}.get(script.get("finish", "stop"), "end_turn")
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}))
        events.append(("message_stop", {"type": "message_stop"}))
        if script.get("error_event"):
            events = events[:1] + [e for e in events if e[0] == "error"]
        self.send_named_events(events, script)

    def do_GET(self):
        self.record(None)
        if not self.authorized():
            return
        if self.route().endswith("/models"):
            self.reply(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.server.models]})
        else:
            self.reply(404, {"error": {"message": "no route " + self.path}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self.record(body)
        action = self.next_action(body)
        if action:
            if action.get("drop"):
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if action.get("garbage"):
                self.reply(200, b"<html>not json</html>")
                return
            if action.get("flood"):
                self.flood(action["flood"])
                return
            if "delay" in action:
                time.sleep(action["delay"])
            elif "status" in action:
                self.reply(action["status"], action.get("body", {"error": {"message": "scripted " + str(action["status"])}}),
                           action.get("headers"))
                return
        if not self.authorized():
            return
        if self.route().endswith("/chat/completions"):
            self.chat(body, (action or {}).get("chat"), (action or {}).get("match"))
            return
        if self.route().endswith("/responses"):
            self.responses_api(body, (action or {}).get("chat"), (action or {}).get("match"))
            return
        if self.path.rstrip("/").endswith("/v1/messages"):
            self.anthropic(body, (action or {}).get("chat"))
            return
        if not self.path.rstrip("/").endswith("/embeddings"):
            self.reply(404, {"error": {"message": "no route " + self.path}})
            return
        if not isinstance(body, dict) or "input" not in body:
            self.reply(400, {"error": {"message": "'input' is a required property"}})
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": embed(t)} for i, t in enumerate(inputs)]
        used = sum(len(re.findall(r"\w{1,4}|[^\w\s]", t)) for t in inputs if isinstance(t, str))
        self.reply(200, {"object": "list", "data": data, "model": body.get("model"),
                         "usage": {"prompt_tokens": used, "total_tokens": used}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script")
    ap.add_argument("--log")
    ap.add_argument("--events")
    ap.add_argument("--require-key")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--models", default="embed-small")
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if a.tls_cert:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.script = json.load(open(a.script)) if a.script else []
    server.log = a.log
    server.events = a.events
    server.require_key = a.require_key
    server.models = [m for m in a.models.split(",") if m]
    server.lock = threading.Lock()
    server.daemon_threads = True
    print("PORT", server.server_address[1], flush=True)
    # Stop when the parent closes our stdin, so a crashed test never leaves a server behind.
    threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
