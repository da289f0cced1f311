"""A loopback OpenAI-compatible Chat Completions server (SSE streaming), for tests and the
benchmark. It plans like a model: call the `add` tool once, then answer with its result."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List


def _chunk(delta: Dict[str, Any], finish: Any = None) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class MockOpenAI:
    """Serves /v1/chat/completions on 127.0.0.1; records the request bodies."""

    def __init__(self, status: int = 200) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.status = status
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if owner.status != 200:
                    payload = json.dumps({"error": {"message": "invalid api key", "type": "auth"}}).encode()
                    self.send_response(owner.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                messages = body.get("messages", [])
                tool_msgs = [m for m in messages if m.get("role") == "tool"]
                if tool_msgs or not body.get("tools"):
                    result = tool_msgs[-1]["content"] if tool_msgs else "no tools"
                    if isinstance(result, list):
                        result = "".join(p.get("text", "") for p in result)
                    chunks = [
                        _chunk({"role": "assistant", "content": "The answer "}),
                        _chunk({"content": f"is {result}."}),
                        _chunk({}, "stop"),
                    ]
                else:
                    args = json.dumps({"a": 2, "b": 3})
                    chunks = [
                        _chunk(
                            {
                                "role": "assistant",
                                "tool_calls": [
                                    {"index": 0, "id": "call_a", "type": "function",
                                     "function": {"name": "add", "arguments": args[:7]}}
                                ],
                            }
                        ),
                        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[7:]}}]}),
                        _chunk({}, "tool_calls"),
                    ]
                usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "mock-model", "choices": [],
                         "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
                chunks.append(b"data: " + json.dumps(usage).encode() + b"\n\n")
                chunks.append(b"data: [DONE]\n\n")
                payload = b"".join(chunks)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "MockOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
