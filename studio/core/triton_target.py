"""Where a project's Triton servers are and how patiently to use them: plain settings data.

Why in core: a project stores its Triton target with its settings, and the
settings (:mod:`studio.project.settings`) must not import a backend. The target
is only checked values; the client that talks to the servers
(:mod:`studio.engine.triton`) reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from studio.core.errors import EngineError

SCHEMES = {"grpc": ("grpc", False), "grpcs": ("grpc", True), "http": ("http", False), "https": ("http", True)}
DEFAULT_PORTS = {"grpc": 8001, "http": 8000}


@dataclass(frozen=True)
class TritonTarget:
    """The servers a project renders on and how patiently.

    ``servers``: URLs such as ``grpc://gpu1:8001``, ``https://gpu2:8000`` (``grpcs``
    and ``https`` use TLS; a bare ``host:port`` is gRPC). ``model``: the model name
    on the servers ("" = the name ``studio triton export`` gives the voice and
    preset). TLS: ``ca_file`` (server certificate authority), ``cert_file`` +
    ``key_file`` (client certificate, mutual TLS), ``verify`` False skips checking
    the server's certificate (HTTP only; test servers). ``timeout_s`` bounds one
    request; a request that times out or gets a server error is retried
    ``retries`` times, then its sentences fail with the reason. ``outage_s``: how
    long the render waits while no server answers before sentences fail.
    ``batch`` sentences per request, ``in_flight`` requests at once.
    """

    servers: tuple[str, ...]
    model: str = ""
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    verify: bool = True
    timeout_s: float = 60.0
    retries: int = 2
    outage_s: float = 600.0
    max_backoff_s: float = 10.0
    batch: int = 4
    in_flight: int = 4

    def __post_init__(self) -> None:
        if not self.servers:
            raise EngineError("no Triton server given")
        for url in self.servers:
            parse_url(url)
        if self.timeout_s <= 0 or self.outage_s < 0 or self.retries < 0 or self.batch < 1 or self.in_flight < 1:
            raise EngineError(f"Triton settings out of range: {self}")
        if bool(self.cert_file) != bool(self.key_file):
            raise EngineError("a client certificate needs both cert_file and key_file")

    @classmethod
    def from_urls(cls, urls: str, **kwargs: Any) -> TritonTarget:
        """``"URL[,URL...]"`` as typed on the command line."""
        return cls(tuple(u.strip() for u in urls.split(",") if u.strip()), **kwargs)


def parse_url(url: str) -> tuple[str, bool, str]:
    """``(protocol, tls, "host:port")`` for a server URL; EngineError when unusable."""
    text = url if "://" in url else f"grpc://{url}"
    parts = urlsplit(text)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise EngineError(f"{url!r} is not a Triton server address (grpc://HOST:PORT, https://HOST:PORT, ...)")
    protocol, tls = SCHEMES[parts.scheme]
    try:
        port = parts.port or DEFAULT_PORTS[protocol]
    except ValueError as exc:
        raise EngineError(f"{url!r}: bad port ({exc})") from exc
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return protocol, tls, f"{host}:{port}"
