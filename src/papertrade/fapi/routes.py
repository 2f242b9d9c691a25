"""The /fapi router (mounted at /fapi and at {LEGACY_PREFIX}/binance/fapi)."""

from fastapi import APIRouter


def build_router() -> APIRouter:
    """Every compatible endpoint."""
    return APIRouter()
