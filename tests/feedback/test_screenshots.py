"""Feedback screenshots: real images (PNG, JPEG with EXIF, WebP) are re-encoded and stored as a
PNG; hostile ones (a script named .png, a polyglot, a truncated file, a decompression bomb,
oversized dimensions, too many bytes, a GIF) are refused with `invalid_image` or 413, never a
500. Operators see them in the CLI and export them to a file."""

import io
import struct
import zlib
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from PIL import Image

from papertrade.config import Settings
from papertrade.feedback import operator
from tests.conftest import User, sign_up

BODY = {"category": "bug", "text": "the chart is blank", "page": "/app", "app_version": "1"}


def picture(kind: str, size: tuple[int, int] = (640, 400), /, **save: Any) -> bytes:
    image = Image.new("RGB", size, (200, 30, 30))
    image.paste((20, 120, 220), (10, 10, size[0] // 2, size[1] // 2))
    out = io.BytesIO()
    image.save(out, format=kind, **save)
    return out.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims huge dimensions: its IHDR is real, its pixels are a few zero bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


async def put(
    user: User, feedback_id: int, data: bytes, media_type: str = "image/png"
) -> httpx.Response:
    return await user.client.put(
        f"/v1/feedback/{feedback_id}/screenshot",
        content=data,
        headers={**user.write_headers(), "Content-Type": media_type},
    )


async def feedback(user: User) -> int:
    sent = await user.post("/v1/feedback", json=BODY)
    assert sent.status_code == 201, sent.text
    assert sent.json()["screenshot"] is None
    return int(sent.json()["id"])


async def test_real_screenshots_are_stored_as_clean_pngs(
    user: User, settings: Settings, tmp_path: Path
) -> None:
    exif = Image.Exif()
    exif[0x010E] = "<script>alert(1)</script>"  # ImageDescription
    for kind, media_type, extra in (
        ("PNG", "image/png", {}),
        ("JPEG", "image/jpeg", {"exif": exif.tobytes()}),
        ("WEBP", "image/webp", {}),
    ):
        fid = await feedback(user)
        sent = await put(user, fid, picture(kind, **extra), media_type)
        assert sent.status_code == 200, sent.text
        assert sent.json()["screenshot"] == {"width": 640, "height": 400}
        got = await user.get(f"/v1/feedback/{fid}/screenshot")
        assert got.status_code == 200 and got.headers["content-type"] == "image/png"
        assert got.headers["x-content-type-options"] == "nosniff"
        assert b"script" not in got.content
        with Image.open(io.BytesIO(got.content)) as stored:
            assert (stored.format, stored.size) == ("PNG", (640, 400))
            assert not stored.getexif()
            red = stored.convert("RGB").getpixel((600, 380))
            assert isinstance(red, tuple) and red[0] > 150 and red[2] < 80  # the pixels survive
    listed = await operator.listing(settings, "open", 1000)
    assert f"#{fid} [open] bug user {user.id}" in listed and "[screenshot 640x400]" in listed
    out = tmp_path / "shot.png"
    said = await operator.export_screenshot(settings, fid, out)
    assert said == f"feedback #{fid}: 640x400 PNG written to {out}"
    assert out.read_bytes() == got.content
    assert (await operator.export_screenshot(settings, 2147483647, out)).startswith("refused")
    assert next(row["screenshot"] for row in (await user.get("/v1/feedback")).json()) == {
        "width": 640,
        "height": 400,
    }


async def test_large_screenshots_are_scaled_down(user: User) -> None:
    fid = await feedback(user)
    sent = await put(user, fid, picture("JPEG", (4000, 1000), quality=60), "image/jpeg")
    assert sent.status_code == 200, sent.text
    assert sent.json()["screenshot"] == {"width": 2560, "height": 640}


async def test_hostile_uploads_are_refused(user: User, app: FastAPI) -> None:
    fid = await feedback(user)
    script = b"<html><script>alert(document.cookie)</script></html>"
    polyglot = b"GIF89a/*" + b"\x00" * 32 + b"*/=alert(1)//"
    truncated = picture("PNG")[:200]
    cases = [
        (script, "image/png"),  # a page named an image: the bytes decide
        (polyglot, "image/png"),
        (truncated, "image/png"),
        (png_header_only(60_000, 60_000), "image/png"),  # a decompression bomb's header
        (png_header_only(9000, 100), "image/png"),  # past 8192 a side
        (png_header_only(8, 8), "image/png"),  # too small to be a screenshot
        (picture("GIF"), "image/png"),  # a GIF is not taken, whatever it is called
        (b"", "image/png"),
        (picture("PNG"), "text/html"),  # a real image with a wrong type
    ]
    for data, media_type in cases:
        refused = await put(user, fid, data, media_type)
        assert refused.status_code == 422, (data[:20], refused.text)
        assert refused.json()["error"] == "invalid_image"
    big = await put(user, fid, b"\x89PNG" + b"\x00" * (2 * 1024 * 1024 + 10))
    assert big.status_code == 413 and big.json()["error"] == "payload_too_large"
    assert (await user.get(f"/v1/feedback/{fid}/screenshot")).status_code == 404

    other = await sign_up(app)
    try:
        stolen = await put(other, fid, picture("PNG"))
        assert stolen.status_code == 404
        assert (await other.get(f"/v1/feedback/{fid}/screenshot")).status_code == 404
    finally:
        await other.client.aclose()
    # Elsewhere the usual body limit holds.
    big_json = await user.client.post(
        "/v1/feedback", content=b"x" * (128 * 1024), headers=user.write_headers()
    )
    assert big_json.status_code == 413
