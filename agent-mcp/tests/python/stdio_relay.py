"""A stdio MCP server stand-in for the Python SDK's stdio_client: relays this process's
stdin and stdout to a TCP port on loopback, where the Rust test serves MCP with
ToolServer::serve_io (the same newline-delimited JSON-RPC framing as serve_stdio)."""

import os
import socket
import sys
import threading

conn = socket.create_connection(("127.0.0.1", int(sys.argv[1])))


def upstream():
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)


threading.Thread(target=upstream, daemon=True).start()
while True:
    data = conn.recv(65536)
    if not data:
        break
    os.write(1, data)
