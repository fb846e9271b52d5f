"""Properties of the classes of escapes, not just their examples.

- Every unambiguous (or ambiguous) prefix of an option that writes or runs a program is
  treated like the option itself: getopt_long and git accept abbreviations.
- Any command substitution inside an arithmetic context (`[[ -eq ]]`, `-v`, `declare -i`,
  `printf -v`, `read`, `$(( ))`) is never waved through beside an allowed command.
- Any variable outside the allow-list in front of an allowed command makes it ask.
- Everyday commands keep running without a question.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistack_tui.permissions.engine import PermissionEngine, request_for_test

from .conftest import World, make_world

FORBIDDEN = {
    "sort": ["output", "compress-program", "temporary-directory", "files0-from"],
    "git log": ["output", "ext-diff", "textconv"],
    "git diff": ["output", "ext-diff", "no-index"],
    "git grep": ["open-files-in-pager", "no-index"],
    "git blame": ["contents", "ignore-revs-file"],
    "rg": ["pre", "pre-glob", "search-zip", "follow"],
    "grep": ["dereference-recursive", "devices"],
    "date": ["set"],
    "wc": ["files0-from"],
}

_SHARED: dict[str, World] = {}


def _world(tmp_path_factory: pytest.TempPathFactory) -> World:
    if "w" not in _SHARED:
        _SHARED["w"] = make_world(tmp_path_factory.mktemp("props") / "w")
    return _SHARED["w"]


def _behavior(engine: PermissionEngine, command: str) -> str:
    return engine.check(request_for_test({"tool": "Bash", "command": command})).behavior


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    command=st.sampled_from(sorted(FORBIDDEN)),
    data=st.data(),
    attached=st.booleans(),
)
def test_every_prefix_of_a_forbidden_option_is_treated_like_it(
    tmp_path_factory: pytest.TempPathFactory, command: str, data: st.DataObject, attached: bool
) -> None:
    world = _world(tmp_path_factory)
    option = data.draw(st.sampled_from(FORBIDDEN[command]))
    prefix = option[: data.draw(st.integers(1, len(option)))]
    word = f"--{prefix}=M" if attached else f"--{prefix} M"
    line = f"{command} {word} README.md"
    for mode in ("default", "plan", "acceptEdits"):
        assert _behavior(world.engine(mode=mode), line) != "allow", (mode, line)
    # A rule for the harmless use does not cover it either.
    rule = f"Bash({command}:*)"
    assert _behavior(world.engine(allow=[rule]), line) != "allow", line


_INNER = st.from_regex(r"[a-z]{1,8}( [a-zA-Z0-9./_-]{1,8}){0,2}", fullmatch=True)
_ARITH = [
    "[[ 'a[$({c})]' -eq 0 ]]",
    "[[ \"a[$({c})]\" -lt 1 ]]",
    "[[ -v 'a[$({c})]' ]]",
    "[[ x -ge 'b[`{c}`]' ]]",
    "declare -i x='a[$({c})]'",
    "typeset -i x='a[$({c})]'",
    "x+='a[$({c})]'",
    "printf -v 'a[$({c})]' x",
    "read 'a[$({c})]' <<< 1",
    "test -v 'a[$({c})]'",
    "[ -v 'a[$({c})]' ]",
    "unset 'a[$({c})]'",
    "echo $(( a[$({c})] ))",
    "(( a[$({c})] ))",
]


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(inner=_INNER, template=st.sampled_from(_ARITH), before=st.booleans())
def test_a_substitution_in_an_arithmetic_context_is_never_waved_through(
    tmp_path_factory: pytest.TempPathFactory, inner: str, template: str, before: bool
) -> None:
    world = _world(tmp_path_factory)
    arith = template.format(c=inner)
    line = f"{arith} && ls" if before else f"ls; {arith}"
    for mode in ("default", "plan", "acceptEdits", "bypassPermissions"):
        engine = world.engine(allow=["Bash(ls:*)"], mode=mode)
        assert _behavior(engine, line) != "allow", (mode, line)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.from_regex(r"[A-Z][A-Z0-9_]{2,20}", fullmatch=True))
def test_an_unlisted_variable_before_an_allowed_command_asks(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    from aistack_tui.permissions.readonly_commands import env_is_safe

    world = _world(tmp_path_factory)
    engine = world.engine(allow=["Bash(make:*)"])
    for line in (f"{name}=x make", f"export {name}=x; make", f"{name}=x; make"):
        behavior = _behavior(engine, line)
        if env_is_safe((name,)):
            assert behavior == "allow", line  # LANG, TZ, CI...: still the same command
        else:
            assert behavior != "allow", line


EVERYDAY_READ_ONLY = [
    "git status", "git diff", "git log --oneline -20", "git show HEAD --stat", "git branch -a",
    "ls", "ls -la src", "cat README.md", "head -n 20 src/a.py", "tail -5 README.md",
    "rg foo", "rg -n 'def x' src", "grep -rn foo src", "find . -name '*.py'",
    "find src -type f -newer README.md", "wc -l src/a.py", "cd src && ls", "pwd",
    "sort README.md | uniq -c", "diff README.md src/a.py", "cat src/*.py", "du -sh src",
    "git log -p -- src/a.py", "echo done", "date +%s", "which python3", "[ -f README.md ] && cat README.md",
    '[ -n "$HOME" ] && echo set', "node -v", "python3 --version", "git remote -v",
    "git log -1 --format=%H", "rg -n TODO --type py", "grep -rn --include='*.py' foo .",
    "find . -type f -name '*.md' | wc -l", "jq .name src/a.py", "ls -R src", "tree -L 2",
]
EVERYDAY_WITH_RULES = [
    ("make", "Bash(make:*)"), ("make test -j4", "Bash(make:*)"),
    ("python -m pytest -q", "Bash(python -m pytest:*)"), ("pytest -x tests", "Bash(pytest:*)"),
    ("npm test", "Bash(npm test:*)"), ("npm run build && npm test", "Bash(npm run build)"),
    ("LC_ALL=C make", "Bash(make:*)"), ("NODE_ENV=test npm test", "Bash(npm test:*)"),
]


@pytest.mark.parametrize("command", EVERYDAY_READ_ONLY)
def test_everyday_read_only_commands_run_without_a_question(world: World, command: str) -> None:
    for mode in ("default", "plan", "acceptEdits"):
        decision = world.engine(mode=mode).check(
            request_for_test({"tool": "Bash", "command": command})
        )
        assert decision.behavior == "allow", (mode, decision.reason)
        assert decision.grant is not None and decision.grant.tier == "read"


@pytest.mark.parametrize(("command", "rule"), EVERYDAY_WITH_RULES)
def test_everyday_commands_allowed_by_a_rule_run_without_a_question(
    world: World, command: str, rule: str
) -> None:
    rules = [rule, "Bash(npm test:*)"]
    decision = world.engine(allow=rules).check(
        request_for_test({"tool": "Bash", "command": command})
    )
    assert decision.behavior == "allow", decision.reason
    assert decision.grant is not None and decision.grant.tier == "write"


def test_the_engine_judges_bash_from_the_directory_it_will_run_in(world: World) -> None:
    """The Bash tool keeps `cd` between calls; a request carries that directory."""
    engine = world.engine(deny=["Read(./config/**)"])
    request = request_for_test({"tool": "Bash", "command": "cat id_rsa"})
    moved = type(request)(request.tool_name, request.tool_input, cwd=world.root / "config")
    assert engine.check(moved).behavior == "deny"
    git = type(request)("Bash", {"command": "echo '[alias]' >> config"}, cwd=world.root / ".git")
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        assert world.engine(mode=mode).check(git).behavior == "ask"


