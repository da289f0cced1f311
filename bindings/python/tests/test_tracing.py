"""enable_tracing: the agent's turns arrive as OTLP/HTTP protobuf POSTs at a loopback collector,
with the invoke_agent and chat spans named as the OpenTelemetry GenAI conventions say. Tracing
is turned on once per process, so this is the suite's only test that turns it on."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Tuple

import pytest

import agent_core as ac


def start_collector() -> Tuple[ThreadingHTTPServer, List[Tuple[str, str, bytes]]]:
    """A collector on 127.0.0.1 that keeps each request's path, content type and body."""
    received: List[Tuple[str, str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.append((self.path, self.headers.get("Content-Type", ""), body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received


async def test_enable_tracing_exports_the_turns_spans_to_the_endpoint():
    server, received = start_collector()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        with ac.enable_tracing(endpoint, service_name="pytest-agent") as tracing:
            assert isinstance(tracing, ac.Tracing)
            agent = ac.Agent(
                ac.ScriptedProvider([ac.Reply("hello")]),
                config=ac.AgentConfig(agent_name="greeter"),
            )
            outcome = await (await agent.create_session()).send("hi")
            assert outcome.status == "done"
        # Leaving the block shut the export down, sending what was buffered.
        tracing.shutdown()
        assert received, "the collector received the spans"
        path, content_type, body = received[0]
        assert path == "/v1/traces"
        assert content_type == "application/x-protobuf"
        for expected in (b"invoke_agent greeter", b"chat scripted", b"pytest-agent", b"gen_ai.conversation.id"):
            assert expected in body, expected

        with pytest.raises(ac.AgentCoreError, match="once per process"):
            ac.enable_tracing(endpoint)
    finally:
        server.shutdown()
