"""WebFetch: fetch a URL and return it as markdown text.

No second model call summarises the page (the agent's own model reads it); instead the
`prompt` is echoed as a heading so the model knows what it was looking for when the long
page comes back. Time, size and redirect limits keep a hostile or huge page from
stalling the session; binary responses are refused rather than mangled.

Redirects are followed one hop at a time, each checked with the permission engine
(`ctx.services.fetch_check`) as a WebFetch call to that URL would be: a hop to a
denied host stops the fetch, and a hop to another host that would ask is not followed;
the model is told the target, so that a new WebFetch call for it asks the user. Hops
within the host the call was approved for only have to be not denied.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlparse, urlsplit

from pydantic import Field

from aistack_tui.permissions.targets import PermissionTarget, UrlFetch
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.schema import CompactSpec

TIMEOUT_SECONDS = 30.0
MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
MAX_RESULT_CHARS = 100_000
USER_AGENT = "aistack/0.1 (+https://pypi.org/project/aistack-tui/)"

_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
)
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "canvas", "head")


class WebFetchArgs(ToolArgs):
    url: str
    prompt: str | None = Field(
        default=None, description="What you are looking for (shown above the content)"
    )


def html_to_markdown(html: str) -> str:
    """Readable markdown of an HTML page, without scripts, styles and page chrome."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else ""
    for tag in soup(_DROP_TAGS):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith("#") else text


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _decode(body: bytes, content_type: str) -> str:
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    charset = match.group(1) if match else "utf-8"
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _is_text(media: str) -> bool:
    return media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml"))


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n\n", 0, limit)
    if cut < limit // 2:
        cut = limit
    return text[:cut] + f"\n\n[Content truncated: showing {cut} of {len(text)} characters.]"


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def _check_hop(origin: str, current: str, target: str, check: Callable[[str], Any] | None) -> None:
    """Raise unless the redirect from `current` to `target` may be followed silently."""
    where = f"{current} redirected to {target}"
    if urlsplit(target).scheme not in ("http", "https") or not _host(target):
        raise ToolError(f"{where}, which is not an http(s) URL; the redirect was not followed.")
    decision = check(target) if check is not None else None
    if decision is not None and decision.behavior == "deny":
        raise ToolError(
            f"{where}; fetching that URL is denied ({decision.reason}). "
            "The redirect was not followed."
        )
    if _host(target) == _host(origin):
        return  # the host this call was approved for
    if decision is not None and decision.behavior == "allow":
        return
    raise ToolError(
        f"{where}, on another host ({_host(target)}) that needs the user's approval, so the "
        f"redirect was not followed. To read it, make a new WebFetch call with the url "
        f"{target} (the user will be asked)."
    )


class WebFetchTool(CompactSpec, Tool[WebFetchArgs]):
    name = "WebFetch"
    args_model = WebFetchArgs
    read_only = True

    def __init__(
        self,
        timeout: float = TIMEOUT_SECONDS,
        max_bytes: int = MAX_BYTES,
        max_chars: int = MAX_RESULT_CHARS,
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_chars = max_chars

    def path_argument(self, args: WebFetchArgs) -> str | None:
        return None

    def permission_target(self, args: WebFetchArgs) -> PermissionTarget:
        """The URL fetched (each redirect is checked again as it comes)."""
        return UrlFetch(args.url)

    def describe(self, args: WebFetchArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"WebFetch {args.url}", detail=args.prompt or "")

    async def run(self, args: WebFetchArgs, ctx: ToolContext) -> ToolOutput:
        import httpx  # deferred: ~100 ms, and most sessions never fetch

        parsed = urlparse(args.url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ToolError(
                f"Invalid URL {args.url!r}: only http:// and https:// URLs can be fetched."
            )
        try:
            async with asyncio.timeout(self.timeout):
                final_url, content_type, body, status = await self._fetch(
                    args.url, ctx.services.fetch_check
                )
        except TimeoutError:
            raise ToolError(f"Fetching {args.url} timed out after {self.timeout:g} s.") from None
        except httpx.HTTPError as e:
            raise ToolError(f"Could not fetch {args.url}: {type(e).__name__}: {e}") from None

        if status >= 400:
            snippet = body[:500].decode("utf-8", errors="replace").strip()
            raise ToolError(
                f"{final_url} returned HTTP {status}." + (f"\n{snippet}" if snippet else "")
            )
        media = _media_type(content_type)
        text = self._to_text(final_url, content_type, body)
        header = [f"URL: {final_url}"]
        if final_url != args.url:
            header.append(f"(redirected from {args.url})")
        if args.prompt:
            header.append(f"\n## Looking for: {args.prompt}")
        content = "\n".join(header) + "\n\n" + _truncate(text, self.max_chars)
        return ToolOutput(
            content,
            display=ToolCallDisplay(
                summary=f"WebFetch {final_url} ({len(body) // 1024} KB, {media or 'unknown type'})",
                detail=text[:5000],
                language="markdown",
            ),
        )

    async def _fetch(
        self, url: str, check: Callable[[str], Any] | None
    ) -> tuple[str, str, bytes, int]:
        import httpx

        async with httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(self.timeout),
            headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/*;q=0.9, */*;q=0.5"},
        ) as client:
            current = url
            for _ in range(MAX_REDIRECTS + 1):
                async with client.stream("GET", current) as response:
                    if response.is_redirect:
                        target = urljoin(str(response.url), response.headers["location"])
                        _check_hop(url, current, target, check)
                        current = target
                        continue
                    return await self._read(current, response)
        raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times.")

    async def _read(self, url: str, response: Any) -> tuple[str, str, bytes, int]:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise ToolError(self._too_large(url))
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                raise ToolError(self._too_large(url))
        content_type = response.headers.get("content-type", "")
        return str(response.url), content_type, bytes(body), response.status_code

    def _too_large(self, url: str) -> str:
        return f"{url} is larger than the {self.max_bytes // (1024 * 1024) or self.max_bytes} " + (
            "MB limit." if self.max_bytes >= 1024 * 1024 else "byte limit."
        )

    def _to_text(self, url: str, content_type: str, body: bytes) -> str:
        media = _media_type(content_type)
        if media in _HTML_TYPES or (
            not media and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
        ):
            return html_to_markdown(_decode(body, content_type))
        if _is_text(media) or (not media and b"\x00" not in body[:8192]):
            return _decode(body, content_type)
        raise ToolError(
            f"{url} returned binary content ({media or 'unknown type'}); WebFetch only reads "
            "text pages (HTML, plain text, JSON, XML)."
        )
