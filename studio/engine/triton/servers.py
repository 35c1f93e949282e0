"""How to reach the Triton servers of a target (:mod:`studio.core.triton_target`): TLS, rotation, health.

Why a rotation with time-outs instead of "try the next URL": a render runs for
hours against servers that get restarted, drained or overloaded. A server that
stops answering is taken out of rotation for a growing back-off (so its requests
go to the others at once) and gets one probe request when that time is up; while
every server is out the engine waits (the render pauses) instead of failing every
sentence, up to the project's outage limit.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from typing import Any

from studio.core.triton_target import TritonTarget, parse_url

log = logging.getLogger(__name__)


class Server:
    """One server: its clients (one per thread: the HTTP client is not thread-safe)
    and its health. ``generation`` grows when the server is taken out, so clients
    made before are dropped (a fresh gRPC channel reconnects at once; an old one
    may sit in its own reconnect back-off)."""

    def __init__(self, url: str, target: TritonTarget) -> None:
        self.url = url
        self.protocol, self.tls, self.address = parse_url(url)
        self.target = target
        self.down_until = 0.0
        self.failures = 0
        self.reason = ""
        self.generation = 0
        #: requests this server answered (how the load spread)
        self.served = 0
        self._local = threading.local()
        self._lock = threading.Lock()
        self._clients: list[Any] = []

    def client(self) -> Any:
        held = getattr(self._local, "held", None)
        if held is not None and held[0] == self.generation:
            return held[1]
        made = self._make_client()
        with self._lock:
            self._clients.append(made)
        self._local.held = (self.generation, made)
        return made

    def _make_client(self) -> Any:
        t = self.target
        if self.protocol == "grpc":
            import tritonclient.grpc as grpcclient

            # certificate arguments are file paths; tritonclient reads them
            return grpcclient.InferenceServerClient(
                url=self.address, ssl=self.tls, root_certificates=t.ca_file or None,
                private_key=t.key_file or None, certificate_chain=t.cert_file or None,
            )
        import tritonclient.http as httpclient

        ssl_options: dict[str, Any] = {}
        if t.ca_file:
            ssl_options["ca_certs"] = t.ca_file
        if t.cert_file:
            ssl_options["certfile"], ssl_options["keyfile"] = t.cert_file, t.key_file
        return httpclient.InferenceServerClient(
            url=self.address, ssl=self.tls, ssl_options=ssl_options or None, insecure=not t.verify,
            connection_timeout=min(10.0, t.timeout_s), network_timeout=t.timeout_s,
        )

    def drop_clients(self) -> None:
        """Close every client made so far (threads make new ones on their next call)."""
        with self._lock:
            clients, self._clients = self._clients, []
            self.generation += 1
        for c in clients:
            try:
                c.close()
            except Exception:
                log.debug("closing a client of %s failed", self.url, exc_info=True)


class Rotation:
    """Round-robin over the servers that are in rotation; back-off for the others."""

    def __init__(self, target: TritonTarget) -> None:
        self.servers = [Server(u, target) for u in target.servers]
        self.target = target
        self._turn = itertools.count()
        self._lock = threading.Lock()
        #: set when the last outage outlasted ``outage_s``: later requests do not wait again
        self.gave_up = False
        #: monotonic time the current outage began (None: some server answers)
        self.paused_since: float | None = None

    def pause(self) -> bool:
        """Note that no server answers; True for the first request to notice (it says so)."""
        with self._lock:
            first = self.paused_since is None
            if first:
                self.paused_since = time.monotonic()
            return first

    def resume(self) -> float | None:
        """A server answered: the outage's length when one was going on (once), else None."""
        with self._lock:
            since, self.paused_since = self.paused_since, None
        return None if since is None else time.monotonic() - since

    def pick(self) -> Server | None:
        """The next server in rotation (None: every server is out right now)."""
        now = time.monotonic()
        with self._lock:
            n = len(self.servers)
            start = next(self._turn)
            for k in range(n):
                s = self.servers[(start + k) % n]
                if s.down_until <= now:
                    return s
        return None

    def next_probe_in(self) -> float:
        """Seconds until the first server out of rotation may be tried again."""
        with self._lock:
            return max(0.0, min(s.down_until for s in self.servers) - time.monotonic())

    def take_out(self, server: Server, reason: str) -> None:
        with self._lock:
            server.failures += 1
            wait = min(self.target.max_backoff_s, 0.5 * 2 ** (server.failures - 1))
            server.down_until = time.monotonic() + wait
            first = server.failures == 1
            server.reason = reason
        if first:
            log.warning("Triton server %s is out of rotation (%s); retrying it in %.1f s", server.url, reason, wait)
        else:
            log.info("Triton server %s still not answering (%s); next try in %.1f s", server.url, reason, wait)
        server.drop_clients()

    def answered(self, server: Server) -> None:
        with self._lock:
            was_out = server.failures > 0
            server.failures, server.reason = 0, ""
            server.served += 1
            self.gave_up = False
        if was_out:
            log.warning("Triton server %s is answering again; back in rotation", server.url)

    def reasons(self) -> str:
        return "; ".join(f"{s.url}: {s.reason}" for s in self.servers if s.reason) or "no answer"
