from __future__ import annotations

import pytest

from aistack_tui.permissions.secrets import REDACTED, mask_secrets


@pytest.mark.parametrize(
    ("secret", "visible"),
    [
        ("sk-ant-api03-" + "A" * 40, "sk-ant-"),
        ("sk-proj-" + "b" * 40, "sk-proj-"),
        ("sk-" + "c" * 48, "sk-"),
        ("AKIAIOSFODNN7EXAMPLE", "AKIA"),
        ("ghp_" + "d" * 36, "ghp_"),
        ("gho_" + "e" * 36, "gho_"),
        ("github_pat_" + "f" * 60, "github_pat_"),
        ("xoxb-1234567890-abcdefghij", "xoxb-"),
        ("AIza" + "g" * 35, "AIza"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJ",
        ),
    ],
)
def test_known_tokens_are_masked_keeping_a_prefix(secret: str, visible: str) -> None:
    out = mask_secrets(f"value: {secret} end")
    assert secret not in out
    assert REDACTED in out
    assert f"value: {visible}" in out
    assert out.endswith(" end")


def test_private_key_block_is_masked() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----"
    out = mask_secrets(f"before\n{key}\nafter")
    assert "MIIEowIBAAKCAQEA" not in out
    assert "BEGIN RSA PRIVATE KEY" in out
    assert out.startswith("before\n")
    assert out.endswith("\nafter")


def test_assignments_are_masked_but_plain_numbers_survive() -> None:
    text = (
        "DB_PASSWORD=hunter2secret\n"
        'api_key: "abcdef123456"\n'
        "token=zzz999yyy\n"
        "max_tokens=4096\n"
        "Authorization: Bearer abcdefghijklmnop123\n"
    )
    out = mask_secrets(text)
    assert "hunter2secret" not in out
    assert "abcdef123456" not in out
    assert "zzz999yyy" not in out
    assert "abcdefghijklmnop123" not in out
    assert "max_tokens=4096" in out
    assert "DB_PASSWORD=" in out


def test_ordinary_text_is_untouched() -> None:
    text = "def tokenize(s):\n    return s.split()  # skip tokens\nAuthor: Jane Doe\n"
    assert mask_secrets(text) == text
