#!/usr/bin/env python3
"""A zero-latency scripted OpenAI-compatible model on loopback, for scripts that run the real binary
without a model (scripts/slurm-local.sh). The same script as tests/cli/support/mock_openai.rs: with
tools, the first step calls the first real tool and later steps call Finish; with a JSON schema, a
minimal instance of it; otherwise a short text. Prints `serving at http://127.0.0.1:PORT/v1`.
"""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def instance(schema):
    """A small value matching a JSON schema."""
    if not isinstance(schema, dict):
        return "ok"
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance(schema[key][0])
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind == "object":
        return {k: instance(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [instance(schema.get("items") or {})]
    return {"integer": 1, "number": 1, "boolean": True, "null": None}.get(kind, "ok")


def first_step(messages):
    if any(m.get("role") in ("tool", "function") for m in messages):
        return False
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            at = content.find("STATE after ")
            while at >= 0:
                if not content[at + 12 :].startswith("0 "):
                    return False
                at = content.find("STATE after ", at + 1)
    return True


def finish():
    return "Finish", {"return_type": "give_answer", "final_answer": "Here is what I found: 42."}


def reply(request):
    messages = request.get("messages") or []
    tools = request.get("tools") or []
    message = {"role": "assistant", "content": ""}
    if tools:
        name, args = finish()
        if first_step(messages):
            real = [t["function"] for t in tools if t["function"]["name"] != "Finish"]
            if real:
                params = real[0].get("parameters") or {}
                props = params.get("properties") or {}
                name = real[0]["name"]
                args = {p: instance(props.get(p, {})) for p in params.get("required") or [] if p}
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        message["tool_calls"] = [call]
    else:
        fmt = request.get("response_format") or {}
        if fmt.get("json_schema", {}).get("schema") is not None:
            message["content"] = json.dumps(instance(fmt["json_schema"]["schema"]))
        elif fmt.get("type") == "json_object":
            message["content"] = "{}"
        else:
            message["content"] = "All done."
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 0,
        "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tools else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send({"object": "list", "data": [{"id": "mock", "object": "model"}]})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.send(reply(json.loads(self.rfile.read(length) or b"{}")))

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"serving at http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
