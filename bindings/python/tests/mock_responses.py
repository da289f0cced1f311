"""A loopback server speaking OpenAI's Responses API: it replays the project's constructed
Responses fixtures (agent-providers/tests/fixtures/openai-responses) in order, one per request,
and records the request bodies."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List

FIXTURES = Path(__file__).resolve().parents[3] / "agent-providers" / "tests" / "fixtures" / "openai-responses"


class MockResponses:
    """Serves POST /v1/responses on 127.0.0.1 with the SSE fixtures named, one per request."""

    def __init__(self, *fixtures: str) -> None:
        self.bodies = [(FIXTURES / name).read_bytes() for name in fixtures]
        self.requests: List[Dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                owner.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length) or b"{}")})
                index = len(owner.requests) - 1
                if index >= len(owner.bodies):
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                payload = owner.bodies[index]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "MockResponses":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
