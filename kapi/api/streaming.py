"""Watch streams straight onto the ASGI server's ``send``.

Django's ASGI handler drives a ``StreamingHttpResponse`` through three async
generator layers (``__aiter__``, ``streaming_content``'s ``make_bytes``
wrapper, ``chunk_bytes``) and a fresh message per chunk; with 1,000 watchers
that is 1,000 passes through that machinery for every change. Authentication,
authorization and planning still run through Django's middleware and view
once, at the start; only the frames of a :class:`WatchStreamResponse` (bytes,
already encoded, shared between watchers) bypass the wrappers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.core.handlers.asgi import ASGIHandler
from django.http import StreamingHttpResponse

__all__ = ["StreamingASGIHandler", "WatchStreamResponse"]


class WatchStreamResponse(StreamingHttpResponse):
    """A watch's response: ``frames`` yields ready-to-send bytes."""

    def __init__(self, frames: AsyncIterator[bytes], **kwargs) -> None:
        super().__init__(frames, **kwargs)
        self.frames = frames

    @property
    def direct(self) -> bool:
        """Still our frames (no middleware replaced the content)."""
        return getattr(self, "_iterator", None) is self.frames


class StreamingASGIHandler(ASGIHandler):
    """Django's ASGI handler, sending a :class:`WatchStreamResponse`'s frames
    as they come; every other response as Django does."""

    async def send_response(self, response, send):
        if not isinstance(response, WatchStreamResponse) or not response.direct:
            return await super().send_response(response, send)
        headers = []
        for header, value in response.items():
            if isinstance(header, str):
                header = header.encode("ascii")
            if isinstance(value, str):
                value = value.encode("latin1")
            headers.append((bytes(header), bytes(value)))
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        frames = response.frames
        try:
            async for frame in frames:
                await send({"type": "http.response.body", "body": frame, "more_body": True})
        finally:
            await frames.aclose()
        await send({"type": "http.response.body"})
