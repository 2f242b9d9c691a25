"""The WebSocket endpoint (native router: /v1/ws and its legacy twin)."""

from fastapi import APIRouter

router = APIRouter(tags=["websocket"])
