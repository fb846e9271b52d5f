"""Provider errors in the TUI: what happened, in a sentence, and what the user can do.

`llm/error_text.py` words what happened ("Anthropic is overloaded (529)"); this module
adds the TUI's next step (Esc, `/model`, `/login`, the key's variable) and keeps one
line per retry series up to date: while retrying, after it worked, or when it gave up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aistack_tui.llm.error_text import RETRYABLE_KINDS, key_variables, what_happened

_WRAPPED = re.compile(r"^(?:[\w.-]+: )?(?P<message>.*?)(?: \(HTTP \d+\))?$", re.DOTALL)


def bare_message(text: str) -> str:
    """`anthropic: prompt is too long (HTTP 400)` → `prompt is too long`."""
    match = _WRAPPED.match(text.strip())
    return match["message"] if match else text


@dataclass(slots=True)
class RetrySeries:
    """The failed attempts of one request, shown as one line that is kept up to date."""

    what: str
    retries: int = 0

    def retrying(self, attempt: int, delay: float) -> str:
        self.retries = attempt
        return (f"{self.what}; retry {attempt} in {delay:.0f} s — Esc to stop, "
                "/model to switch")

    def answered(self) -> str:
        return f"{self.what}; answered after {_retries(self.retries)}"

    def gave_up(self) -> str:
        return (f"{self.what}; gave up after {_retries(self.retries)} — try again in a "
                "moment, or /model to switch")


def retry_what(kind: str, provider: str, status_code: int | None, reason: str) -> str:
    """The clause for a failed attempt (capitalised: it starts the line)."""
    text = what_happened(kind, provider, status_code, bare_message(reason))
    return text[:1].upper() + text[1:]


def failure_text(kind: str, provider: str, status_code: int | None, message: str) -> str:
    """A run-ending error as a sentence with the next step."""
    what = what_happened(kind, provider, status_code, bare_message(message)) if provider else (
        message)
    what = what[:1].upper() + what[1:]
    if kind == "AuthError":
        names = key_variables(provider)
        where = f"check {' or '.join(names)}" if names else "check the provider's key"
        return f"{what} — {where}, or run /login to enter a key"
    if kind in RETRYABLE_KINDS:
        return f"{what} — try again in a moment, or /model to switch"
    if kind == "BadRequestError":
        return f"{what} — /compact if the conversation is long, or /model to switch"
    return what


def _retries(n: int) -> str:
    return f"{n} retr{'y' if n == 1 else 'ies'}"
