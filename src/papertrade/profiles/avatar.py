"""Avatars: an uploaded image is decoded, checked and re-encoded as a 256×256 PNG (nothing the
user sent is served back as is), or an SVG of the initials when there is none."""

import io
from html import escape

from PIL import Image, ImageOps, UnidentifiedImageError

from papertrade.errors import ValidationFailed

SIDE = 256
MAX_SIDE = 4096  # larger pictures are refused before they are decoded
FORMATS = {"PNG", "JPEG", "WEBP", "GIF"}
MEDIA_TYPES = {"image/png", "image/jpeg", "image/webp", "image/gif"}
_COLOURS = ("#2563eb", "#059669", "#d97706", "#dc2626", "#7c3aed", "#0891b2")


def invalid(message: str) -> ValidationFailed:
    return ValidationFailed(message, code="invalid_image")


def normalise(data: bytes) -> bytes:
    """The avatar to store: a square 256×256 PNG made from `data`, or invalid_image."""
    try:
        with Image.open(io.BytesIO(data)) as probe:
            if probe.format not in FORMATS:
                raise invalid("The avatar must be a PNG, JPEG, WebP or GIF image.")
            if max(probe.size) > MAX_SIDE:
                raise invalid(f"The avatar may be at most {MAX_SIDE}×{MAX_SIDE} pixels.")
            probe.verify()
        with Image.open(io.BytesIO(data)) as image:
            image.seek(0)  # the first frame of an animation
            square = ImageOps.fit(image.convert("RGBA"), (SIDE, SIDE))
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise invalid("The avatar is not an image that can be read.") from None
    out = io.BytesIO()
    square.save(out, format="PNG", optimize=True)
    return out.getvalue()


def initials_svg(letters: str, user_id: int) -> str:
    colour = _COLOURS[user_id % len(_COLOURS)]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIDE}" height="{SIDE}" '
        f'viewBox="0 0 {SIDE} {SIDE}"><rect width="100%" height="100%" fill="{colour}"/>'
        f'<text x="50%" y="50%" dy=".35em" text-anchor="middle" font-family="sans-serif" '
        f'font-size="104" fill="#fff">{escape(letters)}</text></svg>'
    )
