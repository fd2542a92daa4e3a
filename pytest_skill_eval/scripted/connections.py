"""The stand-in's HTTP socket: a threading server that can be stopped mid-request."""

from __future__ import annotations

import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class TrackingHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 (a free port) that tracks its connections and
    handler threads, so stopping it can break stalls and keep-alive waits instead of
    leaving them to block."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], thread_name: str) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.thread_name = thread_name
        self._open: set[socket.socket] = set()
        self._handlers: set[threading.Thread] = set()
        self._guard = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=self.thread_name,  # recognisable in diagnostics and tests
            daemon=True,
        )
        # Registered before the thread runs, so stop() never misses a fresh connection.
        with self._guard:
            self._open.add(request)
            self._handlers.add(thread)
        thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._guard:
                self._open.discard(request)
                self._handlers.discard(threading.current_thread())

    def close_connections(self) -> None:
        with self._guard:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its handler

    def join_handlers(self, timeout: float) -> None:
        with self._guard:
            threads = list(self._handlers)
        for thread in threads:
            thread.join(timeout)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-reply is normal here (pi aborting, stop()); stay quiet.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)
