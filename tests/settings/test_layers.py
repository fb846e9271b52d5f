"""Settings layers: order, merging, validation errors that name their source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistack_tui.settings.layers import ConfigError, load_settings, merge


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_later_layers_win_and_lists_concatenate(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    write(home / "settings.json", {"model": "openai/gpt-4.1",
                                   "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}})
    write(project / ".aistack" / "settings.json", {"model": "anthropic/claude-sonnet-4-6",
                                                   "permissions": {"allow": ["Bash(ls)"]}})
    write(project / ".aistack" / "settings.local.json", {"permissions": {"defaultMode": "plan"}})
    loaded = load_settings(home=home, project_root=project, env={"AISTACK_MAX_TURNS": "7"},
                           flags={"permissions": {"defaultMode": "acceptEdits"}})
    s = loaded.settings
    assert s.model == "anthropic/claude-sonnet-4-6"
    assert s.permissions.allow == ["Read", "Bash(ls)"]
    assert s.permissions.deny == ["Bash(rm:*)"]
    assert s.permissions.default_mode == "acceptEdits"
    assert s.max_turns == 7
    sources = [src for src, _ in loaded.permission_layers()]
    assert sources[0].endswith("home/settings.json") and sources[-1] == "command line"


def test_env_overrides_files(tmp_path: Path) -> None:
    write(tmp_path / "home" / "settings.json", {"model": "openai/gpt-4.1"})
    loaded = load_settings(home=tmp_path / "home", project_root=tmp_path,
                           env={"AISTACK_MODEL": "google/gemini-2.5-pro"})
    assert loaded.settings.model == "google/gemini-2.5-pro"


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "home" / "settings.json"
    bad.parent.mkdir()
    bad.write_text('{\n "model": "x",\n oops\n}')
    with pytest.raises(ConfigError, match=rf"{bad}:3:"):
        load_settings(home=tmp_path / "home", project_root=tmp_path, env={})


def test_wrong_type_names_key_and_file(tmp_path: Path) -> None:
    path = write(tmp_path / "p" / ".aistack" / "settings.json",
                 {"permissions": {"allow": "Read"}})
    with pytest.raises(ConfigError) as info:
        load_settings(home=tmp_path / "h", project_root=tmp_path / "p", env={})
    assert str(path) in str(info.value) and "permissions.allow" in str(info.value)


def test_unknown_permission_key_is_an_error_not_ignored(tmp_path: Path) -> None:
    write(tmp_path / "h" / "settings.json", {"permissions": {"alow": ["Bash"]}})
    with pytest.raises(ConfigError, match=r"permissions\.alow"):
        load_settings(home=tmp_path / "h", project_root=tmp_path, env={})


def test_unknown_top_level_keys_are_kept(tmp_path: Path) -> None:
    write(tmp_path / "h" / "settings.json", {"futureFeature": {"x": 1}})
    loaded = load_settings(home=tmp_path / "h", project_root=tmp_path, env={})
    assert loaded.settings.model_extra == {"futureFeature": {"x": 1}}


def test_bad_env_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="AISTACK_MAX_TURNS"):
        load_settings(home=tmp_path, project_root=tmp_path, env={"AISTACK_MAX_TURNS": "many"})


def test_merge_deduplicates_list_entries() -> None:
    assert merge({"a": [1, 2], "b": {"c": 1}}, {"a": [2, 3], "b": {"d": 2}}) == {
        "a": [1, 2, 3], "b": {"c": 1, "d": 2}}
