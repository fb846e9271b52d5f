"""The pure parts of MCP beyond tools: forms, prompt arguments, inherited variables,
package runners, the capabilities announced, resource mentions and resource rules."""

from __future__ import annotations

from pathlib import Path

import mcp_types
import pytest

from aistack_tui.mcp.config import load_mcp_config
from aistack_tui.mcp.elicitation import FormField, form_fields
from aistack_tui.mcp.launch import PASSED_VARIABLES, inherited_env, installs_on_first_run
from aistack_tui.mcp.prompts import PromptArgumentError, parse_arguments, prompt_text
from aistack_tui.mcp.remote import RemotePrompt
from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.permissions.types import PermissionRequest
from aistack_tui.session.mentions import FileIndex, mentioned_resources

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "ok": {"type": "boolean", "title": "Agree"},
        "n": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"},
                                             {"const": "h2", "title": "Wonder Woman"}]},
        "pets": {"type": "array", "items": {"type": "string", "enum": ["cat", "dog"]}},
        "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
        "mail": {"type": "string", "format": "email"},
    },
    "required": ["name"],
}


def test_form_fields_parse_answers_as_the_schema_asks() -> None:
    fields = {f.name: f for f in form_fields(SCHEMA)}
    assert [f.name for f in form_fields(SCHEMA)] == list(SCHEMA["properties"])  # type: ignore[arg-type]
    assert fields["name"].parse(" Ada ") == "Ada"
    with pytest.raises(ValueError, match="Name is required"):
        fields["name"].parse("")
    assert fields["ok"].parse("yes") is True
    assert fields["ok"].parse("n") is False
    assert fields["ok"].parse("") is None  # optional, no default: left out
    assert fields["n"].parse("") == 42
    with pytest.raises(ValueError, match="at most 100"):
        fields["n"].parse("101")
    with pytest.raises(ValueError, match="expected a whole number"):
        fields["n"].parse("1.5")
    assert fields["hero"].kind == "choice"
    assert fields["hero"].parse("2") == "h2"
    assert fields["hero"].parse("Superman") == "h1"
    with pytest.raises(ValueError, match="one of Superman, Wonder Woman"):
        fields["hero"].parse("Batman")
    assert fields["pets"].parse("cat, 2") == ["cat", "dog"]
    assert fields["pet"].choices == (("p1", "Cats"), ("p2", "Dogs"))
    with pytest.raises(ValueError, match="not an email address"):
        fields["mail"].parse("nope")


def test_prompt_arguments_by_position_or_name() -> None:
    prompt = RemotePrompt("ev", "args-prompt", arguments=(("city", True, ""),
                                                          ("state", False, "")))
    assert parse_arguments(prompt, "Paris") == {"city": "Paris"}
    assert parse_arguments(prompt, "'New York' NY") == {"city": "New York", "state": "NY"}
    assert parse_arguments(prompt, "state=Texas Paris") == {"state": "Texas", "city": "Paris"}
    assert parse_arguments(prompt, "Austin Travis County") == {
        "city": "Austin", "state": "Travis County"}  # the last one takes the rest
    with pytest.raises(PromptArgumentError,
                       match=r"needs city: /mcp__ev__args-prompt city \[state\]"):
        parse_arguments(prompt, "state=Texas")
    with pytest.raises(PromptArgumentError, match="takes no arguments"):
        parse_arguments(RemotePrompt("ev", "simple"), "extra")


def test_prompt_text_joins_messages_and_embedded_resources() -> None:
    result = mcp_types.GetPromptResult(messages=[
        mcp_types.PromptMessage(role="user", content=mcp_types.TextContent(
            type="text", text="Review this:")),
        mcp_types.PromptMessage(role="user", content=mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.TextResourceContents(
                uri="demo://x", text="body"))),
        mcp_types.PromptMessage(role="assistant", content=mcp_types.TextContent(
            type="text", text="Sure.")),
    ])
    assert prompt_text(result) == "Review this:\n\n[resource demo://x]\nbody\n\n(assistant) Sure."


def test_ca_and_proxy_variables_reach_stdio_servers_and_nothing_else(tmp_path: Path) -> None:
    environ = {"SSL_CERT_FILE": "/etc/ca.pem", "HTTPS_PROXY": "http://proxy:3128",
               "no_proxy": "localhost", "NODE_EXTRA_CA_CERTS": "/etc/extra.pem",
               "ANTHROPIC_API_KEY": "secret", "HTTP_PROXY": ""}
    assert inherited_env(environ) == {"SSL_CERT_FILE": "/etc/ca.pem",
                                      "HTTPS_PROXY": "http://proxy:3128",
                                      "no_proxy": "localhost",
                                      "NODE_EXTRA_CA_CERTS": "/etc/extra.pem"}
    assert "REQUESTS_CA_BUNDLE" in PASSED_VARIABLES and "http_proxy" in PASSED_VARIABLES
    configs, warnings = load_mcp_config(
        tmp_path, None, {"s": {"command": "srv", "env": {"HTTPS_PROXY": "http://mine:1"}}},
        environ,
    )
    assert warnings == []
    env = dict(configs["s"].env)  # type: ignore[union-attr]
    assert env["HTTPS_PROXY"] == "http://mine:1"  # the entry's own env wins
    assert env["SSL_CERT_FILE"] == "/etc/ca.pem"
    assert "ANTHROPIC_API_KEY" not in env


@pytest.mark.parametrize(("command", "args", "expected"), [
    ("npx", ["-y", "@scope/server"], True),
    ("/usr/local/bin/uvx", ["mcp-server-time"], True),
    ("pnpm", ["dlx", "server"], True),
    ("uv", ["run", "server"], True),
    ("node", ["dist/index.js"], False),
    ("python", ["-m", "server"], False),
])
def test_package_runners_get_the_install_allowance(
    command: str, args: list[str], expected: bool
) -> None:
    assert installs_on_first_run(command, args) is expected


def test_client_announces_exactly_roots_and_form_elicitation() -> None:
    import anyio

    from aistack_tui.mcp.capabilities import AistackClientSession
    from aistack_tui.mcp.client_side import ClientCallbacks
    from aistack_tui.mcp.elicitation import NO_ONE_TO_ASK, DeclineElicitation

    callbacks = ClientCallbacks("s", lambda: [], lambda: DeclineElicitation(NO_ONE_TO_ASK),
                                lambda level, text: None)
    send, receive = anyio.create_memory_object_stream[object](1)
    session = AistackClientSession(
        receive, send,  # type: ignore[arg-type]
        list_roots_callback=callbacks.list_roots, elicitation_callback=callbacks.elicit,
        logging_callback=callbacks.on_log,
    )
    caps = session._build_capabilities("2025-11-25")
    dumped = caps.model_dump(by_alias=True, exclude_none=True)
    assert dumped == {"roots": {"listChanged": True}, "elicitation": {"form": {}}}
    send.close()
    receive.close()


def test_resource_mentions_are_found_and_completed(tmp_path: Path) -> None:
    text = "compare @ev:demo://a/b.md, @other:x://y and @notes.txt and @ev:demo://a/b.md"
    assert mentioned_resources(text, {"ev"}) == [("ev", "demo://a/b.md")]
    (tmp_path / "evil.txt").write_text("")
    index = FileIndex(tmp_path)
    assert index.matches("ev") == ["evil.txt"]
    index.resources = lambda: ["ev:demo://resource/static/document/features.md"]
    assert index.matches("ev:feat") == ["ev:demo://resource/static/document/features.md"]


SECRET = "demo://secret/key"


@pytest.mark.parametrize(("rules", "mode", "server", "uri", "behavior"), [
    ({}, "default", "ev", "x://y", "allow"),
    ({}, "plan", "ev", "x://y", "allow"),
    ({"deny": ["mcp__ev"]}, "default", "ev", "x://y", "deny"),
    ({"deny": ["mcp__ev"]}, "bypassPermissions", "ev", "x://y", "deny"),
    ({"deny": ["mcp__ev"]}, "default", "other", "x://y", "allow"),
    ({"deny": ["mcp__ev__echo"]}, "default", "ev", "x://y", "allow"),  # a tool, not resources
    ({"ask": ["ReadMcpResourceTool"]}, "default", "ev", "x://y", "ask"),
    ({"deny": ["ReadMcpResourceTool"], "allow": ["mcp__ev"]}, "default", "ev", "x://y", "deny"),
    ({"ask": ["mcp__ev"], "allow": ["ReadMcpResourceTool"]}, "default", "ev", "x://y", "ask"),
    ({"deny": ["ReadMcpResourceTool(ev:demo://secret/*)"]}, "default", "ev", SECRET, "deny"),
    ({"deny": ["ReadMcpResourceTool(ev:demo://secret/*)"]}, "default", "ev", "demo://a", "allow"),
    ({"deny": ["ReadMcpResourceTool(ev:demo://secret/*)"]}, "default", "other", SECRET, "allow"),
    ({"ask": ["ReadMcpResourceTool(ev)"]}, "default", "ev", "x://y", "ask"),
    ({"deny": ["mcp__ev"], "allow": ["ReadMcpResourceTool(ev:x://y)"]}, "default", "ev",
     "x://y", "deny"),
])
def test_resource_reads_obey_the_tool_and_server_rules(
    tmp_path: Path, rules: dict[str, list[str]], mode: str, server: str, uri: str, behavior: str
) -> None:
    layer = RuleLayer("test", allow=rules.get("allow", []), ask=rules.get("ask", []),
                      deny=rules.get("deny", []))
    engine = PermissionEngine(layers=[layer], mode=mode, project_root=tmp_path,  # type: ignore[arg-type]
                              home=tmp_path / "home")
    request = PermissionRequest("ReadMcpResourceTool", {"server": server, "uri": uri},
                                read_only=True)
    assert engine.check(request).behavior == behavior


@pytest.mark.parametrize(("rule", "error"), [
    ("ReadMcpResourceTool(ev x)", "resource rules are"),
    ("ListMcpResourcesTool(ev)", "takes no specifier"),
])
def test_malformed_resource_rules_are_errors(rule: str, error: str) -> None:
    from aistack_tui.permissions.rules import RuleError, parse_rule

    with pytest.raises(RuleError, match=error):
        parse_rule(rule, "settings.json")


def test_form_field_defaults_show_as_given() -> None:
    field = FormField("x", "X", "multi", default=["a"], choices=(("a", "A"),))
    assert field.parse("") == ["a"]
