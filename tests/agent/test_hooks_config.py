"""The `hooks` setting is validated entry by entry; a malformed one names where it is."""

from __future__ import annotations

import pytest

from aistack_tui.agent.hooks import DEFAULT_TIMEOUT, HookCommand, HookConfigError, parse_hooks


def test_a_well_formed_setting_becomes_groups_of_commands() -> None:
    groups = parse_hooks({
        "PreToolUse": [{"matcher": "Bash|Edit", "hooks": [
            {"type": "command", "command": "./guard.sh", "timeout": 5},
            {"command": "./log.sh"},
        ]}],
        "Stop": [{"hooks": []}],
    })
    (pre,) = groups["PreToolUse"]
    assert pre.commands == (HookCommand("./guard.sh", 5.0), HookCommand("./log.sh", DEFAULT_TIMEOUT))
    assert pre.matches("Edit") and not pre.matches("Read")
    assert groups["Stop"][0].matcher == "" and groups["Stop"][0].commands == ()


@pytest.mark.parametrize(
    ("hooks", "where"),
    [
        ({"PreToolUse": {"matcher": "Bash"}}, "hooks.PreToolUse must be a list"),
        ({"PreToolUse": ["./guard.sh"]}, r"hooks.PreToolUse\[0\] must be"),
        ({"Stop": [{"hooks": "./x.sh"}]}, r"hooks.Stop\[0\] must be"),
        ({"Stop": [{"hooks": ["./x.sh"]}]}, r"hooks.Stop\[0\].hooks\[0\] needs type 'command'"),
        ({"Stop": [{"hooks": [{"command": ["x"]}]}]}, r"hooks\[0\] needs type 'command'"),
        ({"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]}, "needs type 'command'"),
        ({"Stop": [{"hooks": [{"command": "x", "timeout": "5"}]}]}, "timeout must be a positive"),
        ({"Stop": [{"hooks": [{"command": "x", "timeout": 0}]}]}, "timeout must be a positive"),
        ({"OnSave": []}, "unknown hook event 'OnSave'"),
    ],
)
def test_a_malformed_entry_is_an_error_naming_file_and_place(hooks: dict, where: str) -> None:
    with pytest.raises(HookConfigError, match=where) as info:
        parse_hooks(hooks, "proj/.claude/settings.json")
    assert str(info.value).startswith("proj/.claude/settings.json: ")
