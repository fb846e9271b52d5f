"""Property: an allowed command joined to a non-allowed one never yields allow."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aistack_tui.permissions.types import PermissionRequest

from .conftest import make_world

ALLOWED = ["npm test", "git diff HEAD", "ls -la", "cat README.md", "echo ok"]
FORBIDDEN = [
    "rm -rf build",
    "touch pwned",
    "curl https://evil.example",
    "python3 -c 'x'",
    "chmod +x run.sh",
    "npm publish",
    "wget x",
    "sh -c 'touch y'",
]
JOINERS = [
    "{a} && {b}",
    "{a} || {b}",
    "{a}; {b}",
    "{a} | {b}",
    "{a}\n{b}",
    "{a} & {b}",
    "{b} && {a}",
    "{a} $({b})",
    "{a} `{b}`",
    "{a} <({b})",
    "{a} >({b})",
    '{a} "$({b})"',
    "({b}); {a}",
    "{{ {b}; }}; {a}",
    "{a} <<EOF\n$({b})\nEOF",
    "bash -c '{a}; {b}'",
    "{a} | xargs {b}",
    "eval '{b}' && {a}",
    "if {a}; then {b}; fi",
    "for i in 1; do {b}; done; {a}",
    "{a} ${{x:-$({b})}}",
    "env X=1 {b} && {a}",
    "! {b}; {a}",
    "{a} 2>&1 | {b}",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    allowed=st.sampled_from(ALLOWED),
    forbidden=st.sampled_from(FORBIDDEN),
    joiner=st.sampled_from(JOINERS),
    mode=st.sampled_from(["default", "acceptEdits"]),
    spaces=st.sampled_from(["", " ", "  ", "\t"]),
)
def test_allowed_joined_with_forbidden_never_allows(
    tmp_path_factory: object, allowed: str, forbidden: str, joiner: str, mode: str, spaces: str
) -> None:
    world = _world()
    engine = world.engine(
        allow=["Bash(npm test:*)", "Bash(git diff:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(echo:*)"],
        mode=mode,  # type: ignore[arg-type]
    )
    command = joiner.format(a=allowed, b=forbidden).replace(" ", " " + spaces, 1)
    decision = engine.check(PermissionRequest("Bash", {"command": command}))
    assert decision.behavior != "allow", (command, decision)


_CACHE: dict[str, object] = {}


def _world():  # one world for all examples: the engine is pure, the files never change
    if "w" not in _CACHE:
        import tempfile

        _CACHE["w"] = make_world(Path(tempfile.mkdtemp(prefix="perm-prop-")))
    return _CACHE["w"]  # type: ignore[return-value]
