"""`.mcp.json` loading: schema, ${VAR} expansion, precedence, and bad input as warnings."""

from __future__ import annotations

import json
from pathlib import Path

from aistack_tui.mcp.config import (
    HttpServerConfig,
    SdkServerConfig,
    StdioServerConfig,
    expand_vars,
    load_mcp_config,
)
from aistack_tui.mcp.manager import McpManager

REPO_ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, data: object) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_expansion_of_set_unset_and_default_variables() -> None:
    missing: list[str] = []
    env = {"A": "1", "EMPTY": ""}
    assert expand_vars("${A}-${B:-two}-${EMPTY:-dflt}-${EMPTY}", env, missing) == "1-two-dflt-"
    assert missing == []
    assert expand_vars("x${NOPE}y", env, missing) == "xy"
    assert missing == ["NOPE"]
    assert expand_vars("$A ${A", env, []) == "$A ${A"  # only the ${...} form expands


def test_project_file_every_transport_expanded(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {
        "_comment": "ignored, like every key starting with _",
        "local": {"command": "${TOOLS:-/opt}/srv", "args": ["--key", "${KEY}"],
                  "env": {"TOKEN": "${KEY}", "N": 3}, "cwd": "sub"},
        "remote": {"type": "http", "url": "https://${HOST}/mcp",
                   "headers": {"Authorization": "Bearer ${KEY}"}, "timeout": 30},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse", "disabled": True},
    }})
    servers, warnings = load_mcp_config(tmp_path, None, {}, {"KEY": "s3", "HOST": "h.example"})
    assert warnings == []
    local = servers["local"]
    assert isinstance(local, StdioServerConfig)
    assert (local.command, local.args) == ("/opt/srv", ("--key", "s3"))
    assert dict(local.env) == {"TOKEN": "s3", "N": "3"}
    assert local.cwd == tmp_path / "sub"
    assert local.scope == "project"
    assert local.source == str(tmp_path / ".mcp.json")
    remote = servers["remote"]
    assert isinstance(remote, HttpServerConfig)
    assert (remote.type, remote.url, remote.call_timeout) == ("http", "https://h.example/mcp", 30.0)
    assert dict(remote.headers) == {"Authorization": "Bearer s3"}
    assert servers["old"].disabled
    assert servers["old"].type == "sse"


def test_bad_entries_are_skipped_with_a_warning_naming_file_and_server(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", {"mcpServers": {
        "good": {"command": "ok"},
        "no-command": {"args": ["x"]},
        "bad-type": {"type": "websocket", "url": "ws://x"},
        "bad-url": {"type": "http", "url": "ftp://x"},
        "needs-var": {"command": "srv", "env": {"T": "${UNSET_TOKEN}"}},
        "bad-args": {"command": "srv", "args": "--flag"},
        "typo": {"command": "srv", "argz": []},
        "bad name": {"command": "srv"},
        "a__b": {"command": "srv"},
    }})
    servers, warnings = load_mcp_config(tmp_path, None, {}, {})
    assert list(servers) == ["good"]
    assert len(warnings) == 8
    assert all(w.startswith(f"{path}: MCP server '") for w in warnings)
    text = "\n".join(warnings)
    assert "'no-command' skipped: needs 'command'" in text
    assert "unknown type 'websocket'" in text
    assert "url must start with http:// or https://" in text
    assert "UNSET_TOKEN not set" in text
    assert "'args' must be a list" in text
    assert "unknown key(s) argz" in text
    assert "server names may use letters" in text


def test_malformed_file_is_a_warning_with_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", '{"mcpServers": {\n  "a": {"command": "x",}\n}}')
    servers, warnings = load_mcp_config(tmp_path, None, {"u": {"command": "user-srv"}}, {})
    assert list(servers) == ["u"]  # the user's servers still load
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}:2:")
    assert "invalid JSON" in warnings[0]

    write(tmp_path / ".mcp.json", {"servers": {}})
    _, warnings = load_mcp_config(tmp_path, None, {}, {})
    assert warnings == [f"{path}: expected an object with an 'mcpServers' key"]


def test_project_overrides_user_and_override_file_replaces_project(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"shared": {"command": "project"},
                                                  "p": {"command": "p"}}})
    other = write(tmp_path / "other.json", {"mcpServers": {"o": {"command": "o"}}})
    user = {"shared": {"command": "user"}, "u": {"command": "u"}}

    servers, _ = load_mcp_config(tmp_path, None, user, {})
    assert sorted(servers) == ["p", "shared", "u"]
    assert isinstance(servers["shared"], StdioServerConfig)
    assert servers["shared"].command == "project"
    assert servers["u"].scope == "user"

    servers, _ = load_mcp_config(tmp_path, other, user, {})
    assert sorted(servers) == ["o", "shared", "u"]
    assert servers["o"].scope == "user"  # named on the command line: chosen by the user

    servers, warnings = load_mcp_config(tmp_path, tmp_path / "missing.json", {}, {})
    assert servers == {}
    assert warnings == [f"{tmp_path / 'missing.json'}: MCP config file not found"]


def test_client_servers_win_by_name_are_the_users_and_are_validated(tmp_path: Path) -> None:
    """An editor's `mcpServers`: the user's own choice (no trust gate), yet checked like
    `.mcp.json`, so a bad entry is a warning naming it, not a crash or a silent start."""
    write(tmp_path / ".mcp.json", {"mcpServers": {"shared": {"command": "project"}}})
    client = {"shared": {"command": "editor", "env": {"T": "${TOKEN}"}},
              "web": {"type": "sse", "url": "https://example.com/sse"},
              "bad__name": {"command": "x"}, "nourl": {"type": "http"}}

    servers, warnings = load_mcp_config(tmp_path, None, {}, {"TOKEN": "t0"},
                                        client_servers=client)
    assert sorted(servers) == ["shared", "web"]
    shared = servers["shared"]
    assert isinstance(shared, StdioServerConfig)
    assert (shared.command, dict(shared.env), shared.scope) == ("editor", {"T": "t0"}, "user")
    assert isinstance(servers["web"], HttpServerConfig) and servers["web"].type == "sse"
    assert len(warnings) == 2
    assert all(w.startswith("the editor's session (mcpServers): MCP server ") for w in warnings)
    assert "'bad__name'" in warnings[0] and "'nourl'" in warnings[1]


def test_fingerprint_changes_with_the_entry(tmp_path: Path) -> None:
    a, _ = load_mcp_config(tmp_path, None, {"s": {"command": "x"}}, {})
    b, _ = load_mcp_config(tmp_path, None, {"s": {"command": "x", "args": ["1"]}}, {})
    assert a["s"].fingerprint
    assert a["s"].fingerprint != b["s"].fingerprint


def test_repository_example_file_is_valid(tmp_path: Path) -> None:
    example = REPO_ROOT / ".mcp.json.example"
    servers, warnings = load_mcp_config(
        tmp_path, example, {}, {"GITHUB_TOKEN": "t", "HOME": "/home/u"}
    )
    assert warnings == []
    assert {s.type for s in servers.values()} == {"stdio", "http", "sse"}


def test_an_sdk_server_entry_as_the_agent_sdk_writes_it(tmp_path: Path) -> None:
    path = write(tmp_path / "from-sdk.json", {"mcpServers": {
        "calc": {"type": "sdk", "name": "calc"},
        "odd": {"type": "sdk", "name": "odd", "command": "x"},
    }})
    servers, warnings = load_mcp_config(tmp_path, path, {}, {})
    assert servers["calc"] == SdkServerConfig(
        name="calc", source=str(path), fingerprint=servers["calc"].fingerprint)
    assert warnings == [f"{path}: MCP server 'odd' skipped: unknown key(s) command for a sdk "
                        "server"]


async def test_an_sdk_server_without_a_client_fails_with_the_reason(tmp_path: Path) -> None:
    manager = McpManager({"calc": SdkServerConfig(name="calc")}, tmp_path, 2.0)
    try:
        await manager.start()
        await manager.wait_ready(5)
        [status] = manager.statuses()
    finally:
        await manager.aclose()
    assert status.status == "failed"
    assert status.error is not None and "Claude Agent SDK" in status.error
