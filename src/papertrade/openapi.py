"""The /v1 OpenAPI document, corrected to show the error shape the service really sends."""

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_SCHEMA = {
    "title": "Error",
    "type": "object",
    "required": ["error", "msg"],
    "properties": {
        "error": {"type": "string", "description": "Stable code, see docs/errors.md"},
        "msg": {"type": "string", "description": "What went wrong and what to do"},
    },
    "additionalProperties": False,
    "example": {"error": "validation_error", "msg": "quantity: Input should be greater than 0"},
}
ERROR_RESPONSE = {
    "description": "Error: {error, msg}",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def install(app: FastAPI) -> None:
    """Replace FastAPI's default 422 body ({"detail": …}) with ours and document 4XX/5XX."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)
        components["Error"] = ERROR_SCHEMA
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                if "422" in responses:
                    responses["422"] = ERROR_RESPONSE
                responses.setdefault("4XX", ERROR_RESPONSE)
                responses.setdefault("5XX", ERROR_RESPONSE)
        app.openapi_schema = schema
        return schema

    app.openapi = build  # type: ignore[method-assign]
