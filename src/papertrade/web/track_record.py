"""The track-record page of a public portfolio (`/p/{code}/track-record`): what a person needs
to check it — how far signed and anchored roots cover its chain, the latest root with its
signature and anchors, the recent events each with its proof, and the command that verifies it
all without trusting this server — and the standalone verifier itself, served for download.
The JSON under /v1/chain stays for machines (docs/attestation.md)."""

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select
from starlette.responses import Response

from papertrade.chain import views
from papertrade.chain.proofs import period_label
from papertrade.errors import NotFound
from papertrade.models import Attestation, ChainHead
from papertrade.portfolios import service as portfolio_service
from papertrade.web.routes import PAGE_METHODS, _ctx, _not_found, _page, _viewer

router = APIRouter(include_in_schema=False)
RECENT = 25  # events shown, newest first
VERIFIER = Path(__file__).parent.parent / "chain" / "standalone.py"


@router.api_route("/p/{code}/track-record", methods=PAGE_METHODS)
async def track_record(request: Request, code: str) -> Response:
    viewer = await _viewer(request)
    if not code.isalnum() or len(code) > 20:
        return _not_found(request, viewer, "public portfolio")
    ctx = _ctx(request)
    async with ctx.db.reader() as session:
        try:
            portfolio = await portfolio_service.get_by_code(session, None, code)
        except NotFound:
            return _not_found(request, viewer, "public portfolio")
        status = await views.status(session, portfolio.id)
        latest = await session.scalar(select(Attestation).order_by(Attestation.day.desc()).limit(1))
        root = await views.root_view(session, latest) if latest is not None else None
        head = await session.get(ChainHead, portfolio.id)
        newest = head.seq if head is not None else 0
        recent = await views.entries(session, portfolio.id, max(0, newest - RECENT), RECENT)
    base = ctx.settings.public_base_url.rstrip("/")
    return _page(
        request,
        "track_record.html",
        title=f"Track record of {portfolio.code}",
        script=None,
        viewer=viewer,
        code=portfolio.code,
        name=portfolio.name,
        status=status,
        root=root,
        root_label=period_label(root["day"]) if root else None,
        events=[_event_row(portfolio.code, e, status) for e in reversed(recent)],
        command=f"papertrade verify {portfolio.code} --url {base}",
        script_command=f"python verify_track_record.py {base} {portfolio.code}",
        key_url=f"{base}/v1/chain/key",
    )


def _event_row(code: str, entry: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    event = json.loads(entry["event"])
    kind = event.get("event_type", "")
    if kind in ("fill", "liquidation"):
        what = f"{event['side']} {event['qty']} {event['symbol']} at {event['price']}"
    else:
        what = f"{kind.removeprefix('ledger.').replace('_', ' ')} {event.get('amount', '')}"
    seq = int(entry["seq"])
    return {
        "seq": seq,
        "time": str(event.get("ts", "")).replace("T", " ").removesuffix("Z")[:19] + " UTC",
        "kind": kind,
        "what": what,
        "hash": entry["hash"],
        "signed": seq <= int(status["signed_seq"] or 0),
        "proof": f"/v1/chain/portfolios/{code}/events/{seq}/proof",
    }


@router.api_route("/verify_track_record.py", methods=PAGE_METHODS)
async def verifier(request: Request) -> Response:
    """The standalone verifier (scripts/verify_track_record.py, the same file), to download."""
    body = b"" if request.method == "HEAD" else VERIFIER.read_bytes()
    return Response(
        body,
        media_type="text/x-python; charset=utf-8",
        headers={
            "Content-Disposition": 'attachment; filename="verify_track_record.py"',
            "X-Content-Type-Options": "nosniff",
            "Content-Length": str(VERIFIER.stat().st_size),
        },
    )
