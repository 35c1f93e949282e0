"""``studio triton``: export a voice for Triton, serve it here, test servers; and the
``--triton`` options of ``studio render``.

Why the render options store into the project: where a book renders is a project
setting like its preset (the desktop app shows and edits the same values), so
``studio render --triton URL`` once is enough; ``--no-triton`` goes back to this
machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from studio.core.errors import StudioError

# ------------------------------------------------------------------ render options


def add_render_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "Triton servers",
        "Render on NVIDIA Triton Inference Server instead of this machine (see `studio triton export`). "
        "Stored in the project: later renders use the same servers until --no-triton.",
    )
    group.add_argument("--triton", metavar="URL[,URL...]",
                       help="servers, e.g. grpc://gpu1:8001,grpc://gpu2:8001 (grpcs:// and https:// use TLS)")
    group.add_argument("--no-triton", action="store_true", help="render on this machine again")
    group.add_argument("--triton-model", metavar="NAME", help="model name on the servers (default: VOICE.PRESET)")
    group.add_argument("--triton-ca", metavar="PEM", help="certificate authority of the servers (TLS)")
    group.add_argument("--triton-cert", metavar="PEM", help="client certificate (mutual TLS)")
    group.add_argument("--triton-key", metavar="PEM", help="client key (mutual TLS)")
    group.add_argument("--triton-outage", type=float, metavar="S",
                       help="how long a render waits while no server answers before sentences fail (default: 600)")


def triton_changes(args: argparse.Namespace, current: Any) -> tuple[bool, Any]:
    """(changed, new TritonTarget or None) from the render options and the project's current one."""
    from dataclasses import replace

    from studio.core.triton_target import TritonTarget

    if getattr(args, "no_triton", False):
        return current is not None, None
    extra = {k: v for k, v in (("model", args.triton_model), ("ca_file", args.triton_ca),
                               ("cert_file", args.triton_cert), ("key_file", args.triton_key),
                               ("outage_s", args.triton_outage)) if v is not None}
    if args.triton:
        servers = TritonTarget.from_urls(args.triton).servers
        new = replace(current, servers=servers, **extra) if current is not None else TritonTarget(servers, **extra)
    elif extra:
        if current is None:
            raise StudioError("--triton-model/--triton-ca/... need --triton URL (or a project that renders on Triton)")
        new = replace(current, **extra)
    else:
        return False, current
    return new != current, new


# ------------------------------------------------------------------ studio triton


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("triton", help="export voices for NVIDIA Triton and test servers",
                       description="Render on NVIDIA Triton Inference Server: export a voice's model repository, "
                       "serve it on this machine (CPU, for trying it out), test servers.")
    tsub = p.add_subparsers(dest="triton_command", metavar="ACTION", required=True)

    e = tsub.add_parser("export", help="write a Triton model repository for a voice and preset")
    e.add_argument("voice", nargs="?", help="voice id (default: the bundled voice)")
    e.add_argument("--preset", default="fp32-cpu", choices=("fp32-cpu", "fp16-cuda", "int8-cpu"))
    e.add_argument("-o", "--output", type=Path, required=True, metavar="REPO", help="model repository folder")
    e.add_argument("--bench", type=Path, metavar="FILE",
                   help="bench.json with the figures (default: the one `studio bench` keeps in the cache folder)")
    e.add_argument("--name", help="model name (default: VOICE.PRESET)")
    e.set_defaults(func=_cmd_export)

    s = tsub.add_parser("serve", help="serve a repository with Triton on this machine (CPU; needs .venv-triton)")
    s.add_argument("repo", type=Path, metavar="REPO")
    s.add_argument("--grpc-port", type=int, default=8001)
    s.add_argument("--http-port", type=int, default=8000)
    s.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads per model instance")
    s.add_argument("--tls-cert", type=Path, metavar="PEM", help="serve gRPC over TLS with this certificate")
    s.add_argument("--tls-key", type=Path, metavar="PEM", help="... and this key")
    s.add_argument("--tls-ca", type=Path, metavar="PEM",
                   help="CA that signed the certificate, to check the server is ready (default: the certificate)")
    s.set_defaults(func=_cmd_serve)

    c = tsub.add_parser("check", help="connection test: is the model ready on each server?")
    c.add_argument("servers", metavar="URL[,URL...]")
    c.add_argument("--model", required=True, help="model name on the servers")
    c.add_argument("--ca", metavar="PEM", help="certificate authority (TLS)")
    c.set_defaults(func=_cmd_check)


def _cmd_export(args: argparse.Namespace) -> int:
    from studio.engine.voice.catalog import get_voice
    from studio.stack.triton_repository import export_voice

    model = export_voice(get_voice(args.voice), args.preset, args.output, bench_file=args.bench, name=args.name)
    print(model.config_file)
    print(model.model_file)
    sys.stderr.write(f"studio: model {model.folder.name} written to {args.output} "
                     f"(config validated against Triton's schema)\n")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from studio.stack.triton_repository import LocalServer, serve_forever

    if not any(args.repo.glob("*/config.pbtxt")):
        raise StudioError(f"{args.repo}: no model repository (write one with `studio triton export`)")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise StudioError("--tls-cert and --tls-key go together")
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    server = LocalServer(args.repo, args.grpc_port, args.http_port, tls=tls, ca_file=str(args.tls_ca or args.tls_cert or ""))
    return serve_forever(server, args.threads)


def _cmd_check(args: argparse.Namespace) -> int:
    from studio.engine.triton.client import check_servers
    from studio.core.triton_target import TritonTarget

    statuses = check_servers(TritonTarget.from_urls(args.servers, ca_file=args.ca or ""), args.model)
    for st in statuses:
        print(f"{st.url}: {'ok' if st.ready else 'FAILED'} -- {st.message}")
    return 0 if all(st.ready for st in statuses) else 1
