"""The lean transport: the providers' streaming endpoints over `httpx2`, without the SDKs.

Why: importing `anthropic` costs ~1.3 CPU-seconds (3,400 modules), `openai` ~0.6 s and
`google.genai` ~0.6 s, which is 80-90% of an `aistack -p` run. The three streaming
endpoints aistack uses are plain SSE over HTTP, and `httpx2` is the HTTP stack all three
SDKs are built on (same TLS trust store, proxies from the environment, redirects), so
speaking them directly costs ~0.1 s instead.

What stays the same: each adapter builds the request body with the code the SDK path
uses, and hands the events to the same stream translator, as `SSEObject`s that answer
attribute reads the way the SDKs' event objects do. Errors are mapped by each adapter
into the same `ProviderError`s with the same messages as the SDK path (a test compares
both paths fault by fault). What stays with the SDKs: count-tokens, the models
endpoints, and any client the lean path does not cover (no explicit key, for instance).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from aistack_tui.llm._shared import transport_error
from aistack_tui.llm.errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)

if TYPE_CHECKING:
    import httpx2

Transport: TypeAlias = Literal["lean", "sdk"]
TRANSPORT_ENV = "AISTACK_LLM_TRANSPORT"
"""`sdk` sends every request through the official SDKs; anything else (default) takes the
lean path where it applies."""


def default_transport(env: Mapping[str, str] | None = None) -> Transport:
    value = (os.environ if env is None else env).get(TRANSPORT_ENV, "").strip().lower()
    return "sdk" if value == "sdk" else "lean"


def chosen_transport(asked: Transport | None, api_key: str | None) -> Transport:
    """The transport a provider uses: the one asked for (else `default_transport`), but
    the SDK when there is no explicit key, since the SDK then finds credentials of its
    own (auth tokens, profiles, its environment variables)."""
    if api_key is None:
        return "sdk"
    return asked or default_transport()


@dataclass(frozen=True, slots=True)
class SSE:
    """One server-sent event: `event` is None when the server named none."""

    event: str | None
    data: str


@dataclass(frozen=True, slots=True)
class FailureWords:
    """The messages an SDK gives transport failures, so both paths read alike.

    None means the SDK lets the HTTP library's exception through, which
    `_shared.transport_error` words as "timed out: ..." / "connection failed: ...".
    """

    send_timeout: str | None = None
    send_connect: str | None = None
    read_timeout: str | None = None
    read_connect: str | None = None


StatusError: TypeAlias = Callable[[int, str, "httpx2.Headers", str], ProviderError]
"""(status, body text, headers, reason phrase) → the error the SDK path would raise."""


class ServerAnswer(Exception):
    """What the server said (an error status or an error event), kept as the cause of
    the `ProviderError` it maps to, as the SDK's exception is on the SDK path."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"HTTP {status}: {text[:500]}")
        self.status = status
        self.text = text


class SSEObject:
    """A parsed JSON object read by attribute, as the SDKs' event models are read.

    A missing key reads as None (the SDKs' optional fields), nested objects are views
    too, and `raw` names fields that the translators take as plain values (tool input).
    `camel` maps `snake_case` reads onto `camelCase` keys (Gemini's JSON), and
    `bytes_fields` are base64 strings the SDK decodes to bytes.
    """

    __slots__ = ("_data", "_style")

    def __init__(self, data: Mapping[str, Any], style: ObjectStyle | None = None) -> None:
        self._data = data
        self._style = style or PLAIN

    def __getattr__(self, name: str) -> Any:
        style = self._style
        key = _camel(name) if style.camel else name
        value = self._data.get(key, self._data.get(name))
        if value is None:
            return None
        if name in style.raw:
            return value
        if name in style.bytes_fields and isinstance(value, str):
            return _b64(value)
        if name in style.enums:
            return _EnumValue(value)
        return self._wrap(value)

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, dict):
            return SSEObject(value, self._style)  # pyright: ignore[reportUnknownArgumentType]
        if isinstance(value, list):
            return [self._wrap(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        return value

    def __repr__(self) -> str:
        return f"SSEObject({self._data!r})"


@dataclass(frozen=True, slots=True)
class ObjectStyle:
    camel: bool = False
    raw: frozenset[str] = frozenset()
    bytes_fields: frozenset[str] = frozenset()
    enums: frozenset[str] = frozenset()


PLAIN = ObjectStyle(raw=frozenset({"input"}))


@dataclass(frozen=True, slots=True)
class _EnumValue:
    """What `candidate.finish_reason` is in google-genai: an enum read by `.value`."""

    value: str


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        return None


def join_url(base_url: str, path: str) -> str:
    """`base` + `/` + `path`, with exactly one slash between (as the SDKs join them)."""
    return base_url.rstrip("/") + "/" + path.lstrip("/")


class LeanClient:
    """One provider's HTTP client: a pooled `httpx2.AsyncClient`, built on first use."""

    def __init__(
        self,
        *,
        provider: str,
        headers: Mapping[str, str],
        timeout: float,
        words: FailureWords,
        status_error: StatusError,
    ) -> None:
        self.provider = provider
        self.headers = dict(headers)
        self.timeout = timeout
        self.words = words
        self.status_error = status_error
        self._client: httpx2.AsyncClient | None = None

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            import httpx2

            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(self.timeout), follow_redirects=True
            )
        return self._client

    async def events(
        self, url: str, body: Any, params: Mapping[str, str] | None = None
    ) -> AsyncIterator[SSE]:
        """POST `body` as JSON and yield the response's server-sent events.

        A non-2xx answer raises `status_error(...)`; a timeout or a cut connection raises
        `ProviderTimeoutError` / `ProviderConnectionError` worded as the SDK words them.
        """
        client = self._http()
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        request = client.build_request(
            "POST", url, content=data, params=params, headers=self.headers
        )
        try:
            response = await client.send(request, stream=True)
        except Exception as e:
            raise self._failure(e, self.words.send_timeout, self.words.send_connect) from e
        try:
            if not 200 <= response.status_code < 300:
                try:
                    await response.aread()
                except Exception as e:
                    raise self._failure(e, self.words.read_timeout, self.words.read_connect) from e
                status, text = response.status_code, response.text
                raise self.status_error(
                    status, text, response.headers, response.reason_phrase
                ) from ServerAnswer(status, text)
            async for sse in self._parse(response):
                yield sse
        finally:
            await response.aclose()

    async def _parse(self, response: httpx2.Response) -> AsyncIterator[SSE]:
        event: str | None = None
        data: list[str] = []
        lines = response.aiter_lines()
        while True:
            try:
                line = await anext(lines, None)
            except Exception as e:
                raise self._failure(e, self.words.read_timeout, self.words.read_connect) from e
            if line is None:
                break
            if not line:
                if data or event is not None:
                    yield SSE(event, "\n".join(data))
                event, data = None, []
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
        if data or event is not None:
            yield SSE(event, "\n".join(data))

    def _failure(
        self, exc: Exception, timeout_words: str | None, connect_words: str | None
    ) -> ProviderError:
        mapped = transport_error(exc, self.provider)
        if mapped is None:
            raise exc  # not a transport failure: a bug, which must surface as itself
        if isinstance(mapped, ProviderTimeoutError):
            if timeout_words is not None:
                return ProviderTimeoutError(timeout_words, provider=self.provider)
        elif connect_words is not None:
            return ProviderConnectionError(connect_words, provider=self.provider)
        return mapped

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def parse_json_body(text: str) -> Any:
    """The JSON of an error body, or None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None
