"""Which surface a path belongs to: it decides the error shape."""

from papertrade.config import Settings


def is_fapi_path(path: str, settings: Settings) -> bool:
    return path.startswith("/fapi") or path.startswith(f"{settings.legacy_prefix}/binance/fapi")
