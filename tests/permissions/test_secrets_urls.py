"""Credentials inside URLs (`scheme://user:password@host`) are masked in tool output."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aistack_tui.permissions.secrets import REDACTED, mask_secrets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "DATABASE_URL=postgres://app:s3cretPW@db.internal:5432/prod",
            f"DATABASE_URL=postgres://app:{REDACTED}@db.internal:5432/prod",
        ),
        (
            "postgresql+psycopg2://admin:hunter2@localhost/db",
            f"postgresql+psycopg2://admin:{REDACTED}@localhost/db",
        ),
        ("mysql://root:toor@127.0.0.1:3306/x", f"mysql://root:{REDACTED}@127.0.0.1:3306/x"),
        (
            "mongodb+srv://svc:Zx9%40pw@cluster0.abc.mongodb.net/?retryWrites=true",
            f"mongodb+srv://svc:{REDACTED}@cluster0.abc.mongodb.net/?retryWrites=true",
        ),
        ("redis://:pw123@cache:6379/0", f"redis://:{REDACTED}@cache:6379/0"),
        ("rediss://default:abc@r.example:6380", f"rediss://default:{REDACTED}@r.example:6380"),
        ("amqp://guest:guest@rabbit:5672/vhost", f"amqp://guest:{REDACTED}@rabbit:5672/vhost"),
        (
            "url = https://x-access-token:tok_abcdef@github.com/o/r.git",
            f"url = https://x-access-token:{REDACTED}@github.com/o/r.git",
        ),
        # an unencoded '@' in the password: the host is what follows the last '@'
        ("postgres://u:p@ss@host/db", f"postgres://u:{REDACTED}@host/db"),
        ('"ftp://bob:pw1@files.example"', f'"ftp://bob:{REDACTED}@files.example"'),
    ],
)
def test_url_password_is_masked_keeping_user_and_host(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/a@b",
        "https://example.com/a:b@c",
        "https://example.com/path?x=1:2@3",
        "https://example.com:8443/x",
        "ssh://git@github.com:22/org/repo.git",
        "git@github.com:org/repo.git",
        "mailto:someone@example.com",
        "https://user@example.com/",
        "see http://localhost:8000/ and foo@bar.com",
    ],
)
def test_urls_without_a_password_are_untouched(text: str) -> None:
    assert mask_secrets(text) == text


def test_two_urls_on_one_line_are_both_masked() -> None:
    text = "a=redis://:one1@h1 b=amqp://u:two2@h2/"
    out = mask_secrets(text)
    assert "one1" not in out
    assert "two2" not in out
    assert out == f"a=redis://:{REDACTED}@h1 b=amqp://u:{REDACTED}@h2/"


def test_masking_is_idempotent() -> None:
    once = mask_secrets("postgres://app:s3cret@db/x")
    assert mask_secrets(once) == once


_userinfo = st.text(
    alphabet=st.characters(
        whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="-._~%!$&*+="
    ),
    min_size=1,
    max_size=24,
)


@given(
    scheme=st.sampled_from(["postgres", "mysql", "mongodb+srv", "redis", "amqp", "x-y.z"]),
    user=_userinfo,
    password=_userinfo,
)
def test_any_scheme_user_password_never_shows_the_password(
    scheme: str, user: str, password: str
) -> None:
    text = f"conn {scheme}://{user}:{password}@host.example/db end"
    out = mask_secrets(text)
    assert f":{password}@" not in out
    assert f"{scheme}://{user}:" in out
    assert "@host.example/db end" in out


@pytest.mark.parametrize(
    "text",
    [
        "api_key: sk-proj-abcdefghijklmnopqrstuvwxyz",
        "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "x-access-token:tok_abcdef@github.com",
    ],
)
def test_a_masked_value_is_not_masked_twice(text: str) -> None:
    out = mask_secrets(text)
    assert REDACTED in out
    assert "]]" not in out
    assert mask_secrets(out) == out


@pytest.mark.parametrize(
    "text",
    [
        "a." * 50_000,
        "password" * 20_000,
        "x://u:" + "p" * 100_000,
        "x://u:p@" * 20_000,
        "u:" + "@" * 100_000,
    ],
)
def test_long_adversarial_output_is_masked_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    mask_secrets(text)
    assert time.perf_counter() - started < 2.0
