"""docs/permissions.md lists the secrets patterns exactly as the engine matches them.

The docs once said `.env*` while the code matched only `.env` and `.env.*`, so
`.env-production` and `.envrc` were readable without asking; the list is now checked.
"""

from __future__ import annotations

import re
from pathlib import Path

from aistack_tui.permissions.paths import SECRET_PATTERNS, is_secret
from aistack_tui.sandbox.policy import HOME_SECRETS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"


def _secrets_bullet() -> str:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("- **Secrets**", text.index("## Paths"))
    return text[start : text.index("\n- **", start + 1)]


def test_docs_name_every_secrets_pattern_and_no_other() -> None:
    bullet = _secrets_bullet()
    spans = set(re.findall(r"`([^`]+)`", bullet))
    named = {s for s in spans if not s.startswith("~/")} - {"Read(...)", "cat", "head", "grep", "<", "/"}
    examples = {".env", ".env.local", ".env-production", ".env~", ".envrc", ".env.example",
                ".envs/", "credentials.json"}
    assert set(SECRET_PATTERNS) <= named
    assert named - set(SECRET_PATTERNS) <= examples


def test_every_home_secret_the_sandbox_masks_is_documented() -> None:
    """Each entry of the sandbox's home list is either named in the docs (a directory
    masked whole) or a file the documented patterns already match."""
    bullet = _secrets_bullet()
    for entry in HOME_SECRETS:
        named = f"`~/{entry}`" in bullet
        assert named or is_secret(Path("/home/u") / entry), entry
