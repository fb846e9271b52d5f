"""The read-only tier masks every credentials file the docs list, at home and in the project.

`.env*` as documented (not only `.env` and `.env.*`), `.pgpass`, the cloud command lines'
and other agents' login files: a command the engine judged read-only reads them as empty.
"""

from __future__ import annotations

from pathlib import Path

from aistack_tui.permissions.types import READ_ONLY_GRANT

from .test_exec_tiers import _run, _tool_context
from .test_sandbox import needs_bwrap

pytestmark = needs_bwrap

HOME_FILES = (
    ".pgpass", ".config/gh/hosts.yml", ".config/hub", ".config/doctl/config.yaml",
    ".oci/config", ".terraform.d/credentials.tfrc.json", ".claude/.credentials.json",
    ".codex/auth.json", ".gemini/oauth_creds.json", ".config/github-copilot/hosts.json",
    ".config/gcloud/application_default_credentials.json", ".azure/msal_token_cache.json",
)
PROJECT_FILES = (".env-production", ".env~", ".envrc", ".pgpass")


async def test_read_only_tier_masks_new_credentials_files(tmp_path: Path) -> None:
    project = (tmp_path / "proj").resolve()
    home = tmp_path / "home"
    for base, names in ((home, HOME_FILES), (project, PROJECT_FILES)):
        for rel in names:
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"LEAKED-{rel}\n")
    ctx = _tool_context(project, home, [])
    paths = [str(home / rel) for rel in HOME_FILES] + list(PROJECT_FILES)
    out = await _run(ctx, "cat " + " ".join(f"'{p}'" for p in paths) + "; echo done",
                     READ_ONLY_GRANT)
    assert "done" in out
    assert "LEAKED" not in out, out
