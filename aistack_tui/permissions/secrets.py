"""Masking of credentials in text a tool hands back to the model.

Command output is sent to a third-party model and stored in the session, so anything
that looks like a key, token, private key or password is replaced before it leaves the
tool. A short prefix stays visible (`sk-proj-ab…[REDACTED]`) so the user can still tell
which credential a command printed. The patterns favour known token shapes, where false
positives are rare; the generic `name=value` rule needs a secret-sounding name and a
value that is not a plain number, so `max_tokens=4096` survives. A password inside a URL
(`postgres://app:s3cret@db/prod`, any `scheme://user:password@host`) is masked whatever the
scheme, keeping the user and host; a URL with no `user:password@` part is left alone.
"""

from __future__ import annotations

import re

from aistack_tui.permissions.lazy_re import LazyPattern, lazy

REDACTED = "[REDACTED]"

_PRIVATE_KEY = lazy(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)",
    re.DOTALL,
)

# (pattern, how many characters of the match stay visible)
_TOKENS: list[tuple[LazyPattern, int]] = [
    (lazy(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), 14),
    (lazy(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 10),
    (lazy(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 8),
    (lazy(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), 15),
    (lazy(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), 8),
    (lazy(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 10),
    (lazy(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 9),
    (lazy(r"\bAIza[0-9A-Za-z_\-]{35}"), 8),
    (lazy(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"), 12),
    (lazy(r"\bhf_[A-Za-z0-9]{30,}"), 7),
    (lazy(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 6),
]

# scheme://[user]:password@host — the userinfo ends at the last '@' before the path, so an
# unencoded '@' in the password is still masked; nothing after the first '/', '?' or '#'
# can be userinfo, so `https://example.com/a:b@c` is not touched. Matching starts at "://"
# (a scheme character before it), not at every word, so long output stays linear.
_URL_CREDENTIALS = lazy(
    r"""(?ix)
    (?<=[a-z0-9+.\-])
    (?P<prefix>://(?P<user>[^\s:/?#@\[\]"'`<>]*):)
    (?P<password>[^\s/?#"'`<>]+)
    @(?=[^\s/?#@"'`<>]*[a-z0-9\[])
    """
)

_BEARER = lazy(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=\-]{12,})")

# A name starts only where a run of name characters starts, and once a secret-sounding word
# is found in it the name is taken to the end of the run without backtracking: every
# position of the run would end the same way, and retrying each made long runs quadratic.
_ASSIGNMENT = lazy(
    r"""(?ix)
    (?<![A-Za-z0-9_.\-])
    (?P<key>(?>[A-Za-z0-9_.\-]*?
        (?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key
           |client[_-]?secret|credentials?))
        [A-Za-z0-9_.\-]*+)
    (?P<quote1>["']?)
    (?P<sep>[ \t]*[=:][ \t]*)
    (?P<quote2>["']?)
    (?P<value>[^\s"'`,;&)}\]]{6,})
    """
)


def _mask(token: str, visible: int) -> str:
    return token[: min(visible, len(token) // 2)] + "…" + REDACTED


def _mask_assignment(m: re.Match[str]) -> str:
    value = m.group("value")
    # the value class stops before ']', so an already masked value ends one character later
    already_masked = REDACTED in m.string[m.start("value") : m.end("value") + 1]
    if already_masked or value.isdigit() or value.lower() in ("true", "false", "null", "none"):
        return m.group(0)
    return m.group("key") + m.group("quote1") + m.group("sep") + m.group("quote2") + REDACTED


def _mask_url_password(m: re.Match[str]) -> str:
    if REDACTED in m.group("password"):
        return m.group(0)
    return m.group("prefix") + REDACTED + "@"


def mask_secrets(text: str) -> str:
    """`text` with anything that looks like a credential replaced by a masked form."""
    if not text:
        return text
    text = _PRIVATE_KEY.sub(
        lambda m: (
            f"-----BEGIN {m.group(1)}PRIVATE KEY-----\n{REDACTED}\n"
            f"-----END {m.group(1)}PRIVATE KEY-----"
        ),
        text,
    )
    text = _URL_CREDENTIALS.sub(_mask_url_password, text)
    for pattern, visible in _TOKENS:
        text = pattern.sub(lambda m, v=visible: _mask(m.group(0), v), text)
    text = _BEARER.sub(
        lambda m: m.group(0) if m.string.startswith("…", m.end()) else m.group(1) + REDACTED,
        text,
    )
    return _ASSIGNMENT.sub(_mask_assignment, text)
