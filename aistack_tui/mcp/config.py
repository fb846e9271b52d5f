"""Which MCP servers to run: `.mcp.json` (or `--mcp-config`) plus `mcpServers` in settings.

The file schema is the one other agents use, so an existing `.mcp.json` just works:

    {"mcpServers": {NAME: {"command", "args", "env", "cwd"}
                         | {"type": "http" | "sse", "url", "headers"}}}

Strings may hold `${VAR}` and `${VAR:-default}`, expanded from the environment, so a file
can be committed without secrets. Nothing here is fatal: a malformed file or entry becomes
a warning naming the file and the server, and the rest of the servers still run, because
one broken entry must never keep a session from starting.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from aistack_tui.mcp.launch import inherited_env

PROJECT_FILE = ".mcp.json"
USER_SOURCE = "user settings (mcpServers)"
CLIENT_SOURCE = "the editor's session (mcpServers)"
SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_STDIO_KEYS = {"type", "command", "args", "env", "cwd", "timeout", "disabled"}
_HTTP_KEYS = {"type", "url", "headers", "timeout", "disabled"}
_SDK_KEYS = {"type", "name", "timeout", "disabled"}
"""`name` is what the Agent SDK passes (the name it gave `create_sdk_mcp_server`)."""


@dataclass(frozen=True, slots=True)
class StdioServerConfig:
    """A server we start as a subprocess and talk to over its stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    source: str = ""
    scope: Literal["user", "project"] = "project"
    call_timeout: float | None = None
    disabled: bool = False
    fingerprint: str = ""
    type: Literal["stdio"] = "stdio"

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


@dataclass(frozen=True, slots=True)
class HttpServerConfig:
    """A server already running somewhere, reached over streamable HTTP or SSE."""

    name: str
    type: Literal["http", "sse"]
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    scope: Literal["user", "project"] = "project"
    call_timeout: float | None = None
    disabled: bool = False
    fingerprint: str = ""

    def describe(self) -> str:
        return f"{self.type} {self.url}"


@dataclass(frozen=True, slots=True)
class SdkServerConfig:
    """A server running inside the client program that drives the session (the Claude
    Agent SDK's `create_sdk_mcp_server`), reached through that client (sdk_transport)."""

    name: str
    source: str = ""
    scope: Literal["user", "project"] = "user"
    call_timeout: float | None = None
    disabled: bool = False
    fingerprint: str = ""
    type: Literal["sdk"] = "sdk"

    def describe(self) -> str:
        return "sdk (in the client program)"


ServerConfig: TypeAlias = StdioServerConfig | HttpServerConfig | SdkServerConfig


class _EntryError(ValueError):
    """One server entry is unusable; the message says why."""


def referenced_vars(raw: Any) -> list[str]:
    """The environment variables a raw (unexpanded) entry would read, sorted."""
    text = json.dumps(raw, sort_keys=True, default=str)
    return sorted({m.group(1) for m in _VAR_RE.finditer(text)})


def describe_raw(raw: Any) -> str:
    """What a raw server entry would run or reach, as written (`${VAR}` not expanded),
    so a person can judge it: the command line, or the URL, plus its env and headers."""
    if not isinstance(raw, dict):
        return json.dumps(raw, default=str)
    entry: dict[str, Any] = dict(raw)  # pyright: ignore[reportUnknownArgumentType]
    parts: list[str] = []
    if "command" in entry:
        args = entry.get("args")
        words = [str(entry["command"])]
        if isinstance(args, list):
            words += [str(a) for a in args]  # pyright: ignore[reportUnknownVariableType]
        parts.append(" ".join(words))
    if "url" in entry:
        parts.append(f"{entry.get('type', 'http')} {entry['url']}")
    for key in ("cwd", "env", "headers"):
        value = entry.get(key)
        if isinstance(value, dict) and value:
            pairs = ", ".join(f"{k}={v}" for k, v in value.items())  # pyright: ignore[reportUnknownVariableType]
            parts.append(f"{key}: {pairs}")
        elif value is not None and not isinstance(value, dict):
            parts.append(f"{key}: {value}")
    used = referenced_vars(entry)
    if used:
        parts.append("reads your environment: " + ", ".join(used))
    return "; ".join(parts) or json.dumps(entry, default=str)


def expand_vars(text: str, env: Mapping[str, str], missing: list[str]) -> str:
    """`text` with `${VAR}` / `${VAR:-default}` replaced; unset names go into `missing`."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is not None and (value != "" or default is None):
            return value
        if default is not None:
            return default
        missing.append(name)
        return ""

    return _VAR_RE.sub(replace, text)


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _EntryError(f"{what} must be a string, not {type(value).__name__}")
    return value


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _EntryError(f"{what} must be an object of strings")
    out: dict[str, str] = {}
    for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise _EntryError(f"{what}.{key} must be a string")
        out[str(key)] = str(item)  # pyright: ignore[reportUnknownArgumentType]
    return out


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _EntryError("timeout must be a positive number of seconds")
    return float(value)


def parse_server(
    name: str,
    raw: Any,
    *,
    env: Mapping[str, str],
    base_dir: Path,
    source: str,
    scope: Literal["user", "project"],
) -> ServerConfig:
    """One validated, expanded server entry; raises `_EntryError` saying what is wrong."""
    if not SERVER_NAME_RE.match(name) or "__" in name:
        raise _EntryError(
            "server names may use letters, digits, '-' and '_' (not '__'), because they "
            "become part of tool names like mcp__<server>__<tool>"
        )
    if not isinstance(raw, dict):
        raise _EntryError("entry must be an object with 'command' or 'url'")
    entry: dict[str, Any] = dict(raw)  # pyright: ignore[reportUnknownArgumentType]
    kind = _entry_kind(entry)
    missing: list[str] = []

    def expand(text: str) -> str:
        return expand_vars(text, env, missing)

    common: dict[str, Any] = {
        "name": name, "source": source, "scope": scope,
        "call_timeout": _timeout(entry.get("timeout")),
        "disabled": entry.get("disabled", False) is True,
        "fingerprint": hashlib.sha256(
            json.dumps(entry, sort_keys=True, default=str).encode()
        ).hexdigest()[:16],
    }
    config: ServerConfig
    if kind == "stdio":
        config = _stdio_server(entry, expand, env=env, base_dir=base_dir, common=common)
    elif kind in ("http", "sse"):
        config = _http_server(entry, expand, kind=kind, common=common)
    else:
        config = SdkServerConfig(**common)
    if missing:
        names = ", ".join(sorted(set(missing)))
        raise _EntryError(f"environment variable(s) {names} not set (and no ${{VAR:-default}})")
    return config


def _entry_kind(entry: Mapping[str, Any]) -> Literal["stdio", "http", "sse", "sdk"]:
    """The entry's transport (`type`, or what its keys imply), its keys checked for it."""
    kind = entry.get("type")
    if kind is None:
        if "command" in entry:
            kind = "stdio"
        elif "url" in entry:
            kind = "http"  # a bare url: the current transport, as other agents assume
        else:
            raise _EntryError("needs 'command' (a stdio server) or 'url' (http / sse)")
    if kind == "streamable-http":
        kind = "http"
    known = {"stdio": _STDIO_KEYS, "sdk": _SDK_KEYS}.get(str(kind), _HTTP_KEYS)
    unknown = sorted(k for k in entry if not k.startswith("_") and k not in known)
    if unknown:
        raise _EntryError(f"unknown key(s) {', '.join(unknown)} for a {kind} server")
    if kind not in ("stdio", "http", "sse", "sdk"):
        raise _EntryError(
            f"unknown type {kind!r}; use 'stdio' (with 'command'), 'http' or 'sse' (with 'url')"
        )
    return kind


def _stdio_server(
    entry: Mapping[str, Any],
    expand: Callable[[str], str],
    *,
    env: Mapping[str, str],
    base_dir: Path,
    common: dict[str, Any],
) -> StdioServerConfig:
    if "command" not in entry:
        raise _EntryError("a stdio server needs 'command'")
    command = expand(_string(entry["command"], "command")).strip()
    if not command:
        raise _EntryError("'command' is empty")
    args_raw = entry.get("args", [])
    if not isinstance(args_raw, list):
        raise _EntryError("'args' must be a list of strings")
    args = tuple(
        expand(_string(a, "each of 'args'"))
        for a in args_raw  # pyright: ignore[reportUnknownVariableType]
    )
    # The CA and proxy variables pass by default (launch.py says why); `env` wins.
    env_map = inherited_env(env) | {
        k: expand(v) for k, v in _string_map(entry.get("env"), "env").items()
    }
    cwd_raw = entry.get("cwd")
    cwd = base_dir
    if cwd_raw is not None:
        cwd = Path(expand(_string(cwd_raw, "cwd"))).expanduser()
        if not cwd.is_absolute():
            cwd = base_dir / cwd
    return StdioServerConfig(command=command, args=args, env=env_map, cwd=cwd, **common)


def _http_server(
    entry: Mapping[str, Any],
    expand: Callable[[str], str],
    *,
    kind: Literal["http", "sse"],
    common: dict[str, Any],
) -> HttpServerConfig:
    if "url" not in entry:
        raise _EntryError(f"an {kind} server needs 'url'")
    url = expand(_string(entry["url"], "url")).strip()
    if not url.startswith(("http://", "https://")):
        raise _EntryError(f"url must start with http:// or https://, got {url!r}")
    headers = {k: expand(v) for k, v in _string_map(entry.get("headers"), "headers").items()}
    return HttpServerConfig(type=kind, url=url, headers=headers, **common)


def _parse_servers(
    servers: Any,
    *,
    env: Mapping[str, str],
    base_dir: Path,
    source: str,
    scope: Literal["user", "project"],
    warnings: list[str],
    withheld: Collection[str] = (),
) -> dict[str, ServerConfig]:
    if not isinstance(servers, dict):
        warnings.append(f"{source}: 'mcpServers' must be an object mapping names to servers")
        return {}
    out: dict[str, ServerConfig] = {}
    for name, raw in servers.items():  # pyright: ignore[reportUnknownVariableType]
        name = str(name)  # pyright: ignore[reportUnknownArgumentType]
        if name.startswith("_"):
            continue  # "_comment" and friends: JSON has no comments
        if scope == "project" and name in withheld:
            continue  # not trusted: not even its `${VAR}`s are expanded
        try:
            out[name] = parse_server(
                name, raw, env=env, base_dir=base_dir, source=source, scope=scope
            )
        except _EntryError as e:
            warnings.append(f"{source}: MCP server '{name}' skipped: {e}")
    return out


def read_servers_file(
    path: Path,
    env: Mapping[str, str],
    base_dir: Path,
    warnings: list[str],
    scope: Literal["user", "project"] = "project",
    withheld: Collection[str] = (),
) -> dict[str, ServerConfig]:
    """The servers of one `.mcp.json`-style file; problems become warnings."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        warnings.append(f"{path}: MCP config file not found")
        return {}
    except OSError as e:
        warnings.append(f"{path}: cannot read MCP config: {e.strerror or e}")
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        warnings.append(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}; no servers loaded")
        return {}
    if not isinstance(data, dict) or "mcpServers" not in data:
        warnings.append(f"{path}: expected an object with an 'mcpServers' key")
        return {}
    return _parse_servers(
        data["mcpServers"], env=env, base_dir=base_dir, source=str(path), scope=scope,
        warnings=warnings, withheld=withheld,
    )


def load_mcp_config(
    project_root: Path,
    override: Path | None,
    user_servers: dict[str, Any],
    env: Mapping[str, str],
    *,
    project_servers: Sequence[tuple[str, Any]] = (),
    client_servers: Mapping[str, Any] | None = None,
    withheld: Collection[str] = (),
) -> tuple[dict[str, ServerConfig], list[str]]:
    """Every configured server by name, and the warnings to show.

    User-level servers come first, then the `mcpServers` of the project's settings files
    (`project_servers`: (file, servers) pairs), then the project's `.mcp.json` (or the
    `--mcp-config` file that replaces it), then the servers the client of this session
    supplied (`client_servers`: an editor's `mcpServers`), each overriding earlier ones
    by name, as a project setting overrides a user one. `scope` is "project" for servers
    from any project file: those are the ones that must not start before the user trusts
    them. The client's servers are the user's own choice, like `--mcp-config`.
    Project servers named in `withheld` (not trusted) are left out before anything in
    them is read from the environment.
    """
    warnings: list[str] = []
    servers = _parse_servers(
        user_servers or {}, env=env, base_dir=project_root, source=USER_SOURCE, scope="user",
        warnings=warnings,
    )
    for source, raw in project_servers:
        servers.update(_parse_servers(
            raw, env=env, base_dir=project_root, source=source, scope="project",
            warnings=warnings, withheld=withheld,
        ))
    if override is not None:
        path = override.expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        # Named on the command line, so the user chose it: not a project file to trust.
        servers.update(read_servers_file(path, env, project_root, warnings, scope="user"))
    else:
        path = project_root / PROJECT_FILE
        if path.is_file():
            servers.update(read_servers_file(path, env, project_root, warnings,
                                             withheld=withheld))
    if client_servers:
        servers.update(_parse_servers(
            dict(client_servers), env=env, base_dir=project_root, source=CLIENT_SOURCE,
            scope="user", warnings=warnings,
        ))
    return servers, warnings
