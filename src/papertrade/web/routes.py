"""The web application (server-rendered pages and static assets), mounted at /."""

from fastapi import APIRouter

router = APIRouter(include_in_schema=False)
