"""Native JSON responses and error bodies."""

from typing import Any

from starlette.responses import JSONResponse

from papertrade.kit import plainjson

JSON_MEDIA_TYPE = "application/json; charset=utf-8"


class NativeJSONResponse(JSONResponse):
    """JSON with the spec's media type `application/json; charset=utf-8`, numbers never in
    exponent form."""

    media_type = JSON_MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        return plainjson.dumps(content)


def native_error(
    status_code: int,
    code: str,
    msg: str,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> NativeJSONResponse:
    """The one native error body: {"error": code, "msg": text}, plus what an error documents
    beside them (ai_quota_exceeded's resets_at)."""
    body = {"error": code, "msg": msg, **(extra or {})}
    return NativeJSONResponse(body, status_code=status_code, headers=headers)
