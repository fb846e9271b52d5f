from __future__ import annotations

import difflib

import pytest

from aistack_tui.permissions.diff import diff_hunks, diff_stats, unified_diff
from aistack_tui.permissions.secrets import REDACTED, mask_secrets


def test_unified_diff_matches_difflib_for_a_simple_change() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 10\n", "line ten\n").replace("line 20\n", "line 20\nline 21\n")
    ours = unified_diff("a.txt", old, new)
    theirs = "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/a.txt", "b/a.txt", n=3)
    )
    assert ours == theirs


def test_unified_diff_is_empty_when_nothing_changed() -> None:
    assert unified_diff("x", "same\n", "same\n") == ""


def test_missing_newline_at_end_is_marked() -> None:
    text = unified_diff("f", "a\nb", "a\nb\n")
    assert "\\ No newline at end of file" in text
    assert text.splitlines()[-2:] == ["\\ No newline at end of file", "+b"]


def test_hunks_number_lines_on_both_sides() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc\nd\ne\n"
    (hunk,) = diff_hunks(old, new, context=1)
    kinds = [(ln.kind, ln.text, ln.old_lineno, ln.new_lineno) for ln in hunk.lines]
    assert kinds == [
        ("context", "a", 1, 1),
        ("removed", "b", 2, None),
        ("added", "B", None, 2),
        ("context", "c", 3, 3),
        ("context", "d", 4, 4),
        ("added", "e", None, 5),
    ]
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 4, 1, 5)


def test_new_file_diff_and_stats() -> None:
    text = unified_diff("n.py", "", "x = 1\ny = 2\n")
    assert "@@ -0,0 +1,2 @@" in text
    assert diff_stats("a\nb\n", "a\nc\nd\n") == (2, 1)


def test_form_feed_does_not_split_lines() -> None:
    (hunk,) = diff_hunks("a\x0cb\n", "a\x0cc\n")
    assert [ln.text for ln in hunk.lines] == ["a\x0cb", "a\x0cc"]


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
