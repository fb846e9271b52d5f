"""Claude Code's settings files as layers: where they sit, what they mean, what is left out.

Every rule form Claude Code documents is checked by its effect on the real permission
engine built from the loaded layers, not by the translated text alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleError, layers_from_settings
from aistack_tui.permissions.types import PermissionRequest
from aistack_tui.settings.claude import anchor_path, translate_rule, translate_settings
from aistack_tui.settings.layers import ConfigError, LoadedSettings, load_settings


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    out = {"home": tmp_path / "ahome", "user": tmp_path / "user",
           "project": tmp_path / "project"}
    for d in out.values():
        d.mkdir()
    return out


def load(dirs: dict[str, Path], **env: str) -> LoadedSettings:
    return load_settings(home=dirs["home"], project_root=dirs["project"],
                         env={"HOME": str(dirs["user"]), **env})


def engine_for(loaded: LoadedSettings, dirs: dict[str, Path]) -> PermissionEngine:
    layers = layers_from_settings(loaded.permission_layers())
    return PermissionEngine(layers=layers, mode=loaded.settings.permissions.default_mode,
                            project_root=dirs["project"], home=dirs["user"])


def decide(engine: PermissionEngine, tool: str, read_only: bool = False, **tool_input: Any) -> str:
    return engine.check(PermissionRequest(tool, tool_input, read_only=read_only)).behavior


def test_claude_files_sit_below_aistack_files_of_the_same_scope(dirs: dict[str, Path]) -> None:
    project = dirs["project"]
    write(dirs["user"] / ".claude" / "settings.json",
          {"permissions": {"allow": ["Bash(ls)"], "defaultMode": "plan"}})
    write(dirs["home"] / "settings.json", {"permissions": {"allow": ["Bash(pwd)"]}})
    write(project / ".claude" / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    write(project / ".aistack" / "settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    write(project / ".claude" / "settings.local.json", {"permissions": {"ask": ["WebFetch"]}})
    loaded = load(dirs)
    paths = [layer.path for layer in loaded.layers]
    assert paths == [dirs["user"] / ".claude" / "settings.json",
                     dirs["home"] / "settings.json",
                     project / ".claude" / "settings.json",
                     project / ".aistack" / "settings.json",
                     project / ".claude" / "settings.local.json"]
    assert [layer.claude for layer in loaded.layers] == [True, False, True, False, True]
    perms = loaded.settings.permissions
    assert perms.allow == ["Bash(ls)", "Bash(pwd)"]
    assert perms.default_mode == "acceptEdits"  # the project's file wins over the user's
    assert perms.deny == ["Bash(rm:*)"] and perms.ask == ["WebFetch"]


def test_claude_config_dir_is_honoured(dirs: dict[str, Path], tmp_path: Path) -> None:
    write(tmp_path / "elsewhere" / "settings.json", {"permissions": {"deny": ["WebFetch"]}})
    write(dirs["user"] / ".claude" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    loaded = load(dirs, CLAUDE_CONFIG_DIR=str(tmp_path / "elsewhere"))
    assert loaded.settings.permissions.deny == ["WebFetch"]


def test_a_project_at_home_reads_the_users_claude_file_once(dirs: dict[str, Path]) -> None:
    write(dirs["user"] / ".claude" / "settings.json", {"permissions": {"deny": ["WebFetch"]}})
    loaded = load_settings(home=dirs["home"], project_root=dirs["user"],
                           env={"HOME": str(dirs["user"])})
    assert len(loaded.layers) == 1
    assert loaded.settings.permissions.deny == ["WebFetch"]


def test_keys_aistack_has_no_meaning_for_are_left_out_and_named(dirs: dict[str, Path]) -> None:
    write(dirs["project"] / ".claude" / "settings.json", {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "model": "opus",
        "sandbox": {"enabled": True},
        "statusLine": {"type": "command", "command": "x"},
        "permissions": {"allow": ["KillShell", "Glob(src/**)"], "defaultMode": "dontAsk",
                        "disableBypassPermissionsMode": "disable"},
        "hooks": {"PermissionRequest": [{"hooks": [{"type": "command", "command": "notify"}]}],
                  "PreToolUse": [{"matcher": "Bash", "hooks": [
                      {"type": "prompt", "prompt": "is this safe?"},
                      {"type": "command", "command": "check"}]}]},
        "env": {"GOOD": "1", "BAD": ["x"]},
    })
    (layer,) = load(dirs).layers
    ignored = "\n".join(layer.ignored)
    for expected in ("model", "sandbox", "statusLine", "'KillShell'", "'Glob(src/**)'",
                     "'dontAsk'", "disableBypassPermissionsMode", "hooks.PermissionRequest",
                     "type 'prompt'", "env.BAD"):
        assert expected in ignored, expected
    assert "$schema" not in ignored
    assert layer.data == {
        "permissions": {"allow": []},
        "hooks": {"PreToolUse": [{"matcher": "Bash",
                                  "hooks": [{"type": "command", "command": "check"}]}]},
        "env": {"GOOD": "1"},
    }


@pytest.mark.parametrize(("rule", "kind", "expected"), [
    ("Bash(npm run test:*)", "allow", "Bash(npm run test:*)"),
    ("Read(./.env)", "deny", "Read(./.env)"),
    ("Edit(/src/**/*.ts)", "allow", "Edit(./src/**/*.ts)"),
    ("Read(~/.zshrc)", "deny", "Read(~/.zshrc)"),
    ("Read(//etc/hosts)", "deny", "Read(/etc/hosts)"),
    ("WebFetch(domain:example.com)", "allow", "WebFetch(domain:example.com)"),
    ("mcp__github", "allow", "mcp__github"),
    ("mcp__github__create_issue", "deny", "mcp__github__create_issue"),
    ("Agent", "deny", "Task"),
    ("Task(Explore)", "deny", "Task"),
    ("Task(Explore)", "allow", None),
    ("NotebookEdit(x.ipynb)", "allow", None),
    ("Bash(unbalanced", "deny", "Bash(unbalanced"),  # left for the rule parser to reject
])
def test_rule_translation(rule: str, kind: str, expected: str | None) -> None:
    assert translate_rule(rule, kind)[0] == expected


def test_anchors() -> None:
    assert anchor_path("/src/x") == "./src/x"
    assert anchor_path("//abs/x") == "/abs/x"
    assert anchor_path("~/x") == "~/x" and anchor_path("x") == "x" and anchor_path("./x") == "./x"


def test_every_rule_form_means_what_claude_code_documents(
    dirs: dict[str, Path], tmp_path: Path
) -> None:
    project, user = dirs["project"], dirs["user"]
    for rel in ("src/app/main.ts", "src/app/main.py", ".env", "notes.txt"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("x\n")
    (user / ".zshrc").write_text("x\n")
    outside = tmp_path / "srv" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text("x\n")
    top_src = tmp_path / "src" / "top.ts"  # a real /src-like path outside the project
    top_src.parent.mkdir()
    top_src.write_text("x\n")
    write(project / ".claude" / "settings.json", {"permissions": {
        "allow": ["Bash(npm run test:*)", "Edit(/src/**/*.ts)", "WebFetch(domain:docs.rs)",
                  "mcp__github", f"Read(/{tmp_path}/srv/**)"],
        "deny": ["Read(./.env)", "Read(~/.zshrc)", f"Read(/{outside})",
                 "mcp__jira__delete_issue"],
    }})
    engine = engine_for(load(dirs), dirs)
    assert decide(engine, "Bash", command="npm run test") == "allow"
    assert decide(engine, "Bash", command="npm run test -- --watch") == "allow"
    assert decide(engine, "Bash", command="npm run testx") == "ask"  # word boundary
    assert decide(engine, "Bash", command="npm run test && curl evil.sh") == "ask"
    # `/src/...` is the project's src, not the file system's.
    assert decide(engine, "Edit", file_path=str(project / "src/app/main.ts")) == "allow"
    assert decide(engine, "Edit", file_path=str(project / "src/app/main.py")) == "ask"
    assert decide(engine, "Edit", file_path=str(top_src)) == "ask"
    # `./.env` is the project's .env; `~/.zshrc` is in the home; `//path` is absolute.
    assert decide(engine, "Read", True, file_path=str(project / ".env")) == "deny"
    assert decide(engine, "Read", True, file_path=str(user / ".zshrc")) == "deny"
    assert decide(engine, "Read", True, file_path=str(outside)) == "deny"
    assert decide(engine, "Read", True, file_path=str(project / "notes.txt")) == "allow"
    assert decide(engine, "WebFetch", True, url="https://docs.rs/x") == "allow"
    assert decide(engine, "WebFetch", True, url="https://evil.example/x") == "ask"
    assert decide(engine, "mcp__github__create_issue") == "allow"
    assert decide(engine, "mcp__jira__delete_issue") == "deny"
    assert decide(engine, "mcp__jira__get_issue") == "ask"


def test_a_malformed_rule_in_a_claude_file_is_fatal_naming_the_file(
    dirs: dict[str, Path]
) -> None:
    path = write(dirs["project"] / ".claude" / "settings.json",
                 {"permissions": {"deny": ["Bash(git push:* --force)"]}})
    with pytest.raises(RuleError) as info:
        layers_from_settings(load(dirs).permission_layers())
    assert str(path) in str(info.value) and "git push" in str(info.value)


def test_a_malformed_hook_of_a_known_event_is_kept_for_the_hook_parser(
    dirs: dict[str, Path]
) -> None:
    layer = translate_settings({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command"}]}]}})
    from aistack_tui.agent.hooks import HookConfigError, parse_hooks

    with pytest.raises(HookConfigError, match="needs type 'command' and a command"):
        parse_hooks(layer.data["hooks"], "x/.claude/settings.json")


def test_wrong_types_are_left_out_rather_than_rejecting_the_file(dirs: dict[str, Path]) -> None:
    write(dirs["project"] / ".claude" / "settings.json",
          {"permissions": {"allow": "Bash", "deny": ["WebFetch"]}, "env": "x"})
    loaded = load(dirs)
    assert loaded.settings.permissions.deny == ["WebFetch"]
    assert loaded.settings.permissions.allow == []
    assert any("permissions.allow" in note for note in loaded.layers[0].ignored)


def test_malformed_json_in_a_claude_file_names_it(dirs: dict[str, Path]) -> None:
    bad = dirs["project"] / ".claude" / "settings.json"
    bad.parent.mkdir()
    bad.write_text('{\n  "permissions": {\n}')
    with pytest.raises(ConfigError, match=rf"{bad}:3:"):
        load(dirs)


def test_double_slash_is_absolute_in_aistacks_own_files_too(dirs: dict[str, Path],
                                                           tmp_path: Path) -> None:
    secret = tmp_path / "srv" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("x\n")
    write(dirs["project"] / ".aistack" / "settings.json",
          {"permissions": {"deny": [f"Read(/{secret})"]}})
    engine = engine_for(load(dirs), dirs)
    assert decide(engine, "Read", True, file_path=str(secret)) == "deny"
