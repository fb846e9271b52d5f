"""`--settings FILE-OR-JSON`: Claude Code's flag, read with Claude Code's meaning, as the
layer just below the other command-line flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistack_tui.settings.layers import ConfigError, load_settings


def load(tmp_path: Path, value: str, **more: object):
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return load_settings(home=tmp_path / "home", project_root=project, env={},
                         settings_arg=value, cwd=project, **more)  # type: ignore[arg-type]


def test_inline_json_rules_are_translated_from_claude_codes_anchors(tmp_path: Path) -> None:
    loaded = load(tmp_path, json.dumps({"permissions": {
        "allow": ["Bash(npm run test:*)"], "deny": ["Edit(/src/**)", "Read(//etc/passwd)"],
        "defaultMode": "acceptEdits"}}))
    perms = loaded.settings.permissions
    assert perms.allow == ["Bash(npm run test:*)"]
    # Claude Code's `/x` is the project's, `//x` absolute: aistack's `./x` and `/x`.
    assert perms.deny == ["Edit(./src/**)", "Read(/etc/passwd)"]
    assert perms.default_mode == "acceptEdits"
    assert loaded.layers[-1].source == "--settings"


def test_a_file_is_read_relative_to_the_working_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "ci.json").write_text(json.dumps({"permissions": {"deny": ["WebFetch"]},
                                                 "model": "opus"}))
    loaded = load(tmp_path, "ci.json")
    assert loaded.settings.permissions.deny == ["WebFetch"]
    layer = loaded.layers[-1]
    assert layer.source == f"--settings {project / 'ci.json'}"
    assert layer.path is None  # the user's own flag: never gated as a project file
    assert any(note.startswith("model") for note in layer.ignored)


def test_command_line_flags_still_win_over_settings(tmp_path: Path) -> None:
    loaded = load(tmp_path, json.dumps({"permissions": {"defaultMode": "acceptEdits"}}),
                  flags={"permissions": {"defaultMode": "plan"}})
    assert loaded.settings.permissions.default_mode == "plan"


@pytest.mark.parametrize(("value", "says"), [
    ("{not json", "--settings: malformed JSON"),
    ("missing.json", "--settings: no settings file"),
    ('{"permissions": {"allow": "Bash"}}', None),  # wrong type: left out and noted
])
def test_bad_settings_say_what_is_wrong(tmp_path: Path, value: str, says: str | None) -> None:
    if says is None:
        loaded = load(tmp_path, value)
        assert loaded.settings.permissions.allow == []
        assert loaded.layers[-1].ignored
        return
    with pytest.raises(ConfigError, match=says):
        load(tmp_path, value)
