"""Session grants and saved rules: the only permission code that touches a file.

"Yes, don't ask again" adds the rule to an in-memory allow list for the session; "save"
also appends it to the project's `.aistack/settings.local.json`. Saving reads the file,
changes only `permissions.allow` and writes it back atomically, so keys the user (or
another tool) put there survive; a file that is not valid JSON is left untouched and
reported instead of being overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path

from aistack_tui.atomic_file import write_atomically
from aistack_tui.json_values import as_list, as_object
from aistack_tui.permissions.rules import Rule, RuleError, parse_rule
from aistack_tui.permissions.types import Behavior

SESSION_SOURCE = "session grant"


class SessionGrants:
    """Rules granted for this session only (shared by a session's subagents)."""

    def __init__(self) -> None:
        self._rules: list[Rule] = []

    def add(self, text: str) -> Rule:
        rule = parse_rule(text, SESSION_SOURCE)
        if all(r.text != rule.text for r in self._rules):
            self._rules.append(rule)
        return rule

    def remove(self, text: str) -> bool:
        """Forget the grant written as `text`; False when there was none."""
        kept = [r for r in self._rules if r.text != text]
        removed = len(kept) != len(self._rules)
        self._rules = kept
        return removed

    @property
    def rules(self) -> list[Rule]:
        return list(self._rules)


def append_allow_rule(path: Path, rule_text: str) -> bool:
    """Append `rule_text` to `permissions.allow` in the JSON file at `path`."""
    return append_rule(path, rule_text, "allow")


def append_rule(path: Path, rule_text: str, behavior: Behavior) -> bool:
    """Append `rule_text` to `permissions.<behavior>` in the JSON file at `path`.

    Creates the file (and `.aistack/`) if missing; returns False when the rule was
    already there. Raises RuleError if the rule is malformed or the file can't be used.
    """
    parse_rule(rule_text, str(path))
    data: dict[str, object] = {}
    if path.exists():
        try:
            loaded = as_object(json.loads(path.read_text(encoding="utf-8") or "{}"))
        except (OSError, json.JSONDecodeError) as e:
            raise RuleError(str(path), rule_text, f"cannot update the file ({e})") from e
        if loaded is None:
            raise RuleError(str(path), rule_text, "the file is not a JSON object")
        data = loaded
    # The views share the parsed objects, so appending below changes `data` itself.
    perms = as_object(data.setdefault("permissions", {}))
    if perms is None:
        raise RuleError(str(path), rule_text, "'permissions' is not an object")
    allow = as_list(perms.setdefault(behavior, []))
    if allow is None:
        raise RuleError(str(path), rule_text, f"'permissions.{behavior}' is not a list")
    if rule_text in allow:
        return False
    allow.append(rule_text)
    try:
        write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as e:
        raise RuleError(str(path), rule_text, f"cannot write the file ({e})") from e
    return True
