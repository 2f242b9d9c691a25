"""Inbound signal webhooks."""

from fastapi import APIRouter

router = APIRouter(tags=["webhooks"])  # under /v1 (and the legacy prefix)
root_router = APIRouter(tags=["webhooks"])  # /webhook/tv/<token>, the address the spec gives
