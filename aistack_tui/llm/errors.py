"""One hierarchy of provider errors, each knowing whether a retry can help.

Adapters translate their SDK's exceptions into these (with `raise ... from e`), so the
retry layer and the agent never look at SDK types.
"""

from __future__ import annotations


class ProviderError(Exception):
    """Base of every error a provider raises."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status_code = status_code
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f"{self.provider}: " if self.provider else ""
        code = f" (HTTP {self.status_code})" if self.status_code else ""
        return f"{where}{self.message}{code}"


class AuthError(ProviderError):
    """401/403: the key is missing, wrong or lacks access."""


class BadRequestError(ProviderError):
    """400/404/422: the request itself is wrong; retrying sends the same mistake."""


class RateLimitError(ProviderError):
    retryable = True


class OverloadedError(ProviderError):
    """Anthropic's 529 and the providers' in-stream `overloaded` errors."""

    retryable = True


class ServerError(ProviderError):
    """5xx and 408/409: the provider failed; a retry usually succeeds."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    retryable = True


class ProviderConnectionError(ProviderError):
    """The connection failed or the stream was cut before the message was complete."""

    retryable = True


RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def error_for_status(
    status: int, message: str, *, provider: str = "", retry_after: float | None = None
) -> ProviderError:
    """Map an HTTP status onto the hierarchy (shared by every adapter)."""
    cls: type[ProviderError]
    if status in (401, 403):
        cls = AuthError
    elif status == 429:
        cls = RateLimitError
    elif status == 529:
        cls = OverloadedError
    elif status in RETRYABLE_STATUS or 500 <= status < 600:
        cls = ServerError
    else:
        cls = BadRequestError
    return cls(message, provider=provider, status_code=status, retry_after=retry_after)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `retry-after` (or `retry-after-ms`) header value; None if absent."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
