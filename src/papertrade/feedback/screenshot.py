"""Feedback screenshots: the uploaded bytes are sniffed (Pillow reads the format from the bytes,
never from the Content-Type or a file name), checked (format, size in bytes, dimensions, pixel
count before decoding) and re-encoded as a PNG without any metadata. What is stored and shown to
operators is only that PNG, so a polyglot file, a script in EXIF or a decompression bomb never
leaves this module."""

import io
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

from papertrade.errors import ValidationFailed

MAX_BYTES = 2 * 1024 * 1024  # also this path's request body limit (middleware.UPLOAD_MAX_BYTES)
MAX_SIDE = 8192  # refused before decoding
MAX_PIXELS = 24_000_000  # e.g. 6000×4000; larger is refused before decoding
MIN_SIDE = 16
KEEP_SIDE = 2560  # larger screenshots are scaled down to this longer side
FORMATS = {"PNG", "JPEG", "WEBP"}
MEDIA_TYPES = {"image/png", "image/jpeg", "image/webp"}


@dataclass(frozen=True, slots=True)
class Screenshot:
    png: bytes
    width: int
    height: int
    sent_format: str


def invalid(message: str) -> ValidationFailed:
    return ValidationFailed(message, code="invalid_image")


def normalise(data: bytes) -> Screenshot:
    """The screenshot to store, or invalid_image saying what is wrong."""
    if not data:
        raise invalid("The screenshot is empty.")
    if len(data) > MAX_BYTES:
        raise invalid(f"The screenshot may be at most {MAX_BYTES // (1024 * 1024)} MiB.")
    try:
        with Image.open(io.BytesIO(data), formats=sorted(FORMATS)) as probe:
            kind = probe.format or ""
            width, height = probe.size
            if max(width, height) > MAX_SIDE or width * height > MAX_PIXELS:
                raise invalid(
                    f"The screenshot is {width}×{height}; at most {MAX_SIDE} pixels a side and "
                    f"{MAX_PIXELS // 1_000_000} megapixels."
                )
            if min(width, height) < MIN_SIDE:
                raise invalid(f"The screenshot is {width}×{height}; at least {MIN_SIDE} a side.")
            probe.verify()  # a truncated or corrupt file fails here, before a full decode
        with Image.open(io.BytesIO(data), formats=[kind]) as image:
            image.seek(0)  # the first frame of an animated WebP
            picture = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    except ValidationFailed:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise invalid(
            "The screenshot must be a PNG, JPEG or WebP image that can be read."
        ) from None
    picture.thumbnail((KEEP_SIDE, KEEP_SIDE))  # keeps the aspect; never enlarges
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)  # no text chunks, no EXIF: only pixels
    return Screenshot(out.getvalue(), picture.width, picture.height, kind)
