"""Rule parsing, settings validation, session grants, saving rules, lint and self-tests."""

from __future__ import annotations

import json

import pytest

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.explain import lint
from aistack_tui.permissions.modes import next_mode, parse_mode
from aistack_tui.permissions.rules import (
    RuleError,
    layers_from_settings,
    parse_rule,
    split_rule_list,
)
from aistack_tui.permissions.types import PermissionRequest

from .conftest import World


def bash(command: str) -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Bash", "tool"),
        ("Bash(npm test)", "bash_exact"),
        ("Bash(git diff:*)", "bash_prefix"),
        ("Bash(npm run *)", "bash_glob"),
        ("Read(./src/**)", "path"),
        ("Edit(~/notes/*.md)", "path"),
        ("WebFetch(domain:example.com)", "domain"),
        ("mcp__github", "mcp"),
        ("mcp__github__create_issue", "mcp"),
        ("TodoWrite", "tool"),
    ],
)
def test_valid_rules_parse(text: str, kind: str) -> None:
    assert parse_rule(text, "s.json").kind == kind


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Bash(",
        "Bash()",
        "Bsh(ls)",
        "Bash(git:* diff)",
        "Bash(a:*:*)",
        "Bash('unclosed)",
        "WebFetch(example.com)",
        "WebFetch(domain:https://x.com)",
        "Grep(./src)",
        "TodoWrite(x)",
        "Read(~bob/x)",
        "mcp__",
        "Bash(ls\x00)",
        "Bash((ls)",
    ],
)
def test_malformed_rule_is_an_error_naming_source_and_rule(text: str) -> None:
    with pytest.raises(RuleError) as info:
        parse_rule(text, "/p/.aistack/settings.json")
    message = str(info.value)
    assert message.startswith("/p/.aistack/settings.json: invalid permission rule")
    assert "\n" not in message


def test_layers_from_settings_rejects_bad_shapes() -> None:
    with pytest.raises(RuleError, match=r"settings.json.*must be a list of strings"):
        layers_from_settings([("settings.json", {"allow": "Bash"})])
    with pytest.raises(RuleError, match=r"local.json.*unknown tool"):
        layers_from_settings([("ok.json", {"allow": ["Read"]}), ("local.json", {"deny": ["Nope"]})])
    with pytest.raises(RuleError, match="expect"):
        layers_from_settings([("s.json", {"tests": [{"tool": "Bash", "command": "ls"}]})])


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"tool": "Read", "path": ["a.py"], "expect": "allow"}, "'path' must be a string"),
        ({"tool": "WebFetch", "url": 3, "expect": "ask"}, "'url' must be a string"),
        ({"tool": "Edit", "input": "a.py", "expect": "ask"}, "'input' must be an object"),
        ({"tool": "Read", "path": "a.py", "expect": "allow", "mode": "yolo"}, "unknown mode"),
        ("Read a.py", "each test is an object"),
    ],
)
def test_a_self_test_entry_of_the_wrong_shape_fails_at_load(entry: object, why: str) -> None:
    with pytest.raises(RuleError, match=why) as info:
        layers_from_settings([("s.json", {"tests": [entry]})])
    assert info.value.source == "s.json"


def test_settings_layers_that_are_not_objects_fail_and_none_is_empty() -> None:
    assert layers_from_settings([("s.json", None)])[0].allow == []
    with pytest.raises(RuleError, match="must be an object"):
        layers_from_settings([("s.json", ["Read"])])
    with pytest.raises(RuleError, match="a rule must be a string"):
        parse_rule(3, "t.json")


def test_split_rule_list_keeps_parenthesised_spaces_and_commas() -> None:
    assert split_rule_list(["Bash(git diff:*),Read  Edit", "Bash(npm run a, b)"]) == [
        "Bash(git diff:*)",
        "Read",
        "Edit",
        "Bash(npm run a, b)",
    ]


def test_prefix_rule_respects_word_boundary(world: World) -> None:
    engine = world.engine(allow=["Bash(git:*)"])
    assert engine.check(bash("git status --short")).behavior == "allow"
    assert engine.check(bash("gitx status")).behavior == "ask"


def test_glob_rule_trailing_star_matches_bare_command(world: World) -> None:
    engine = world.engine(allow=["Bash(npm run *)"])
    assert engine.check(bash("npm run")).behavior == "allow"
    assert engine.check(bash("npm run build -- --prod")).behavior == "allow"
    assert engine.check(bash("npm runner")).behavior == "ask"


def test_decision_names_rule_and_source(world: World) -> None:
    decision = world.engine(deny=["Bash(git push:*)"]).check(bash("git status && git push"))
    assert decision.behavior == "deny"
    assert decision.rule == "Bash(git push:*)"
    assert "test-settings.json" in decision.reason
    assert decision.parts == ("git status", "git push")


@pytest.mark.parametrize(
    ("command", "suggested"),
    [
        ("npm test -- -k x", "Bash(npm test:*)"),
        ("ls -la /etc", "Bash(ls:*)"),
        ("git status && make build", "Bash(make build:*)"),
        ("$(x) y", None),
    ],
)
def test_suggested_rule_is_the_narrowest_useful_one(
    world: World, command: str, suggested: str | None
) -> None:
    assert world.engine().check(bash(command)).suggested_rule == suggested


def test_suggested_rules_for_other_tools(world: World) -> None:
    engine = world.engine()
    assert engine.check(PermissionRequest("Edit", {"file_path": "src/a.py"})).suggested_rule == (
        "Edit(./src/**)"
    )
    fetch = PermissionRequest("WebFetch", {"url": "https://docs.example.com/a"}, read_only=True)
    assert engine.check(fetch).suggested_rule == "WebFetch(domain:docs.example.com)"
    assert engine.check(PermissionRequest("mcp__srv__t", {})).suggested_rule == "mcp__srv__t"


def test_session_grant_allows_until_engine_is_rebuilt(world: World) -> None:
    engine = world.engine(deny=["Bash(npm publish:*)"])
    assert engine.check(bash("npm test")).behavior == "ask"
    engine.grant_session("Bash(npm:*)")
    assert engine.check(bash("npm test")).behavior == "allow"
    assert engine.check(bash("npm publish")).behavior == "deny", "grants never beat deny"
    assert world.engine().check(bash("npm test")).behavior == "ask"
    with pytest.raises(RuleError):
        engine.grant_session("Bash(")


def test_save_rule_keeps_existing_content(world: World) -> None:
    local = world.root / ".aistack" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(
        json.dumps({"model": "x", "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}})
    )
    engine = world.engine()
    engine.save_rule("Bash(npm test:*)")
    engine.save_rule("Bash(npm test:*)")
    data = json.loads(local.read_text())
    assert data == {
        "model": "x",
        "permissions": {"allow": ["Read", "Bash(npm test:*)"], "deny": ["Bash(rm:*)"]},
    }
    assert engine.check(bash("npm test")).behavior == "allow"


def test_save_rule_creates_the_file_and_refuses_to_clobber_broken_json(world: World) -> None:
    engine = world.engine()
    engine.save_rule("Edit(./src/**)")
    local = world.root / ".aistack" / "settings.local.json"
    assert json.loads(local.read_text()) == {"permissions": {"allow": ["Edit(./src/**)"]}}
    local.write_text("{broken")
    with pytest.raises(RuleError, match=r"settings\.local\.json"):
        engine.save_rule("Read")
    assert local.read_text() == "{broken"


def test_mode_is_mutable_and_cycles(world: World) -> None:
    engine = world.engine()
    edit = PermissionRequest("Edit", {"file_path": "src/a.py"})
    assert engine.check(edit).behavior == "ask"
    engine.mode = "acceptEdits"
    assert engine.check(edit).behavior == "allow"
    assert next_mode("default") == "acceptEdits"
    assert next_mode("plan", allow_bypass=False) == "default"
    with pytest.raises(ValueError, match="unknown permission mode"):
        parse_mode("yolo")


def test_dont_ask_denies_what_would_ask_and_keeps_what_rules_allow(world: World) -> None:
    engine = world.engine(allow=["Bash(npm test)"], ask=["Bash(git push:*)"],
                          mode=parse_mode("dontAsk"))
    edit = engine.check(PermissionRequest("Edit", {"file_path": "src/a.py"}))
    assert edit.behavior == "deny" and "dontAsk" in edit.reason
    assert engine.check(bash("git push origin main")).behavior == "deny"  # an ask rule too
    assert engine.check(bash("npm test")).behavior == "allow"
    assert engine.check(PermissionRequest("Read", {"file_path": "src/a.py"},
                                          read_only=True)).behavior == "allow"
    assert next_mode("dontAsk") == "default"  # Shift+Tab never lands on it


def test_additional_and_extra_read_directories(world: World) -> None:
    engine = world.engine(
        mode="acceptEdits", additional_directories=[world.outside], extra_read_dirs=[world.evil]
    )
    assert (
        engine.check(
            PermissionRequest("Edit", {"file_path": str(world.outside / "n.txt")})
        ).behavior
        == "allow"
    )
    assert (
        engine.check(PermissionRequest("Read", {"file_path": str(world.evil / "x.txt")})).behavior
        == "allow"
    )
    assert (
        engine.check(PermissionRequest("Edit", {"file_path": str(world.evil / "x.txt")})).behavior
        == "ask"
    )


def test_control_characters_in_paths_ask(world: World) -> None:
    decision = world.engine().check(PermissionRequest("Read", {"file_path": "src/a.py\x00.txt"}))
    assert decision.behavior == "ask"
    assert "control characters" in decision.reason


def test_bad_tool_input_asks_instead_of_raising(world: World) -> None:
    engine = world.engine()
    assert engine.check(PermissionRequest("Bash", {"command": 42})).behavior == "ask"
    assert engine.check(PermissionRequest("Edit", {})).behavior == "ask"
    assert engine.check(PermissionRequest("Read", "nope")).behavior == "ask"  # type: ignore[arg-type]


def test_self_tests_run_on_load_and_name_the_file(world: World) -> None:
    layers = layers_from_settings(
        [
            (
                "proj/settings.json",
                {
                    "deny": ["Bash(git push --force:*)"],
                    "tests": [
                        {"tool": "Bash", "command": "git push --force", "expect": "deny"},
                        {
                            "tool": "Edit",
                            "path": "src/a.py",
                            "expect": "allow",
                            "mode": "acceptEdits",
                        },
                    ],
                },
            )
        ]
    )
    PermissionEngine(layers=layers, mode="default", project_root=world.root, home=world.home)
    bad = layers_from_settings(
        [
            (
                "proj/settings.json",
                {"tests": [{"tool": "Bash", "command": "git push --force", "expect": "deny"}]},
            )
        ]
    )
    with pytest.raises(RuleError, match=r"proj/settings.json.*expected deny, got ask"):
        PermissionEngine(layers=bad, mode="default", project_root=world.root, home=world.home)


def test_lint_reports_malformed_shadowed_never_matching_and_failing_tests(world: World) -> None:
    problems = lint(
        [
            ("home.json", {"deny": ["Bash(git:*)", "Read(./secrets/**)"]}),
            (
                "proj.json",
                {
                    "allow": [
                        "Bash(git push:*)",
                        "Bash(npm test && npm run lint)",
                        "Bash(FOO=1 make)",
                        "Read(./secrets/a.txt)",
                        "Bash(timeout 5 make)",
                        "Read(../x)",
                        "Bsh(ls)",
                        "Bash(make)",
                    ],
                    "tests": [{"tool": "Bash", "command": "make", "expect": "deny"}],
                },
            ),
        ],
        world.root,
        world.home,
    )
    found = {(p.kind, p.rule) for p in problems}
    assert ("shadowed", "Bash(git push:*)") in found
    assert ("shadowed", "Read(./secrets/a.txt)") in found
    assert ("never-matches", "Bash(npm test && npm run lint)") in found
    assert ("never-matches", "Bash(FOO=1 make)") in found
    assert ("never-matches", "Bash(timeout 5 make)") in found
    assert ("never-matches", "Read(../x)") in found
    assert ("malformed", "Bsh(ls)") in found
    assert ("self-test", "Bash make") in found
    assert not any(p.rule == "Bash(make)" for p in problems)


def test_lint_of_clean_settings_is_empty(world: World) -> None:
    assert (
        lint(
            [("s.json", {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]})],
            world.root,
            world.home,
        )
        == []
    )
