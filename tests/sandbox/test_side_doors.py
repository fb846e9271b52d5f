"""The side doors: nothing a confined command leaves behind runs or leaks outside it.

Every case in ATTACKS is first shown to be real (run straight in bash, the user's next
step runs the attacker's program or a file outside the project changes), then run through
the Bash tool in the sandbox with the grant a rule or the mode would give it, followed by
the same next step: nothing happens. The tests below the table cover what a table row
cannot say: host sockets, masks under git, renamed and walked-around masks, aistack's own
home.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from aistack_tui.permissions.types import READ_ONLY_GRANT, ExecGrant
from aistack_tui.tools.base import ToolError
from tests.sandbox.side_doors import (
    RULE,
    RULE_GIT,
    Attack,
    confined_context,
    make_world,
    run_confined,
    run_directly,
    run_in_sandbox,
    unix_listener,
)

from .test_sandbox import needs_bwrap

pytestmark = needs_bwrap

FSMON = "printf '[core]\\n\\tfsmonitor = \"touch {marker} #\"\\n'"
HOOK = "printf '#!/bin/sh\\ntouch {marker}\\n'"
PY = "/usr/bin/python3"
COMMIT = "git -c user.name=U -c user.email=u@example.com commit -qm"

ATTACKS: list[Attack] = [
    # 1. git's indirections: the user's next `git status` would run the fsmonitor.
    Attack("git config written directly", f"{FSMON} >> .git/config"),
    Attack("git config through a substitution", f"{FSMON} >> \"$(echo .git)/config\""),
    Attack("commondir pointing at a doctored copy",
           f"cp -r .git .gc && {FSMON} >> .gc/config && echo {{project}}/.gc > .git/commondir"),
    Attack("commondir, by a command that runs git",
           f"git status -s >/dev/null; cp -r .git .gc && {FSMON} >> .gc/config && "
           "echo {project}/.gc > .git/commondir", grant=RULE_GIT),
    Attack(".git renamed, doctored and put back",
           f"mv .git g && {FSMON} >> g/config && mv g .git"),
    Attack(".git swapped for a gitfile",
           f"mv .git g && {FSMON} >> g/config && echo 'gitdir: g' > .git"),
    Attack("git config, by a command that runs git",
           f"git status -s >/dev/null; {FSMON} >> .git/config", grant=RULE_GIT),
    Attack("a hook, by a command that runs git",
           f"git status -s >/dev/null; {HOOK} > .git/hooks/post-commit && "
           "chmod +x .git/hooks/post-commit", grant=RULE_GIT,
           next_step="git commit -q --allow-empty -m x"),
    Attack("info/ and a hooks path, by a command that runs git",
           "git status -s >/dev/null; mkdir -p .git/info .git/h && "
           f"{HOOK} > .git/h/post-commit && chmod +x .git/h/post-commit && "
           "git config core.hooksPath .git/h", grant=RULE_GIT,
           next_step="git commit -q --allow-empty -m x"),
    Attack("a submodule's git directory config",
           f"{FSMON} >> .git/modules/lib/config", grant=RULE_GIT,
           setup="mkdir -p .git/modules && git init -q --separate-git-dir .git/modules/lib lib",
           next_cwd="lib"),
    Attack("a new repository below the project",
           f"git init -q sub && {FSMON} >> sub/.git/config", grant=RULE_GIT, next_cwd="sub"),
    Attack("git init where there was no repository",
           f"git init -q . && {FSMON} >> .git/config", grant=RULE_GIT, setup="rm -rf .git"),
    # 4. the home directory as the project.
    Attack("~/.gitconfig when home is the project", f"{FSMON} >> {{home}}/.gitconfig",
           project_is_home=True),
    Attack("~/.config/git/config created", f"mkdir -p .config/git && {FSMON} > .config/git/config",
           setup="mkdir -p .config", project_is_home=True),
    Attack("~/.ssh/config ProxyCommand",
           "printf 'Host x\\n  ProxyCommand touch {marker}\\n' > .ssh/config",
           setup="mkdir -p .ssh", project_is_home=True,
           next_step="ssh -F {home}/.ssh/config -o BatchMode=yes x true 2>/dev/null; true"),
    Attack("~/.ssh/authorized_keys", "echo 'ssh-ed25519 AAAA attacker' >> .ssh/authorized_keys",
           setup="mkdir -p .ssh", project_is_home=True,
           proof="changed:{home}/.ssh/authorized_keys"),
    Attack("a .pth in the Python user site",
           "mkdir -p .local/lib/python3.11/site-packages && "
           "echo \"import os; os.system('touch {marker}')\" > "
           ".local/lib/python3.11/site-packages/x.pth",
           setup="mkdir -p .local/lib", project_is_home=True, next_step=f"{PY} -c pass"),
    Attack("~/.bashrc created", "echo 'touch {marker}' >> .bashrc", project_is_home=True,
           next_step="bash -i -c true 2>/dev/null"),
    # 5. protected paths created so that they survive.
    Attack(".mcp.json behind a 1,500-deep .agents",
           "mkdir -p .agents/$(printf 'd/%.0s' $(seq 1500)); echo '{}' > .mcp.json",
           proof="changed:{project}/.mcp.json", teardown="rm -rf .agents"),
    Attack(".envrc created", "echo 'touch {marker}' > .envrc", proof="changed:{project}/.envrc"),
    # 6. Edit-deny masks walked around.
    Attack("a denied directory's parent renamed",
           "mv locked l2 && mkdir locked && echo pwned > locked/f",
           setup="mkdir -p locked && echo orig > locked/f", deny=("Edit(./locked/**)",),
           proof="changed:{project}/locked/f"),
    Attack("a denied file's directory renamed",
           "mv conf c2 && mkdir conf && echo pwned > conf/app.cfg",
           setup="mkdir -p conf && echo orig > conf/app.cfg", deny=("Edit(./conf/app.cfg)",),
           proof="changed:{project}/conf/app.cfg"),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_every_attack_is_real_when_run_directly(attack: Attack, tmp_path: Path) -> None:
    world = make_world(tmp_path, project_is_home=attack.project_is_home)
    real = run_directly(world, attack)
    world.user_runs(attack.teardown)
    assert real, f"{attack.name}: no effect unconfined"


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
async def test_no_attack_gets_through_the_sandbox(attack: Attack, tmp_path: Path) -> None:
    world = make_world(tmp_path, project_is_home=attack.project_is_home)
    got_out, printed = await run_confined(world, attack)
    world.user_runs(attack.teardown)
    assert not got_out, f"{attack.name} escaped; the command printed:\n{printed}"


# --- 3. host sockets ---------------------------------------------------------------------

CONNECT_UNIX = (
    f"{PY} -c \"import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(2); "
    "s.connect(sys.argv[1]); s.send(b'leak'); print('connected')\" {sock}"
)


@pytest.mark.parametrize("grant", [READ_ONLY_GRANT, RULE, ExecGrant("write", True)],
                         ids=["read tier", "write tier", "write tier with network"])
async def test_no_host_socket_is_reachable(grant: ExecGrant, tmp_path: Path) -> None:
    world = make_world(tmp_path)
    host_tmp = Path("/tmp") / f"aistack-test-{os.getpid()}-{tmp_path.name}.sock"
    in_project = world.project / ".dev.sock"
    assert len(str(in_project)) < 100  # sun_path
    with unix_listener(host_tmp) as to_tmp, unix_listener(in_project) as to_project:
        probe = socket.socket(socket.AF_UNIX)
        probe.connect(str(host_tmp))  # the listeners are real
        probe.close()
        deadline = time.monotonic() + 5
        while not to_tmp and time.monotonic() < deadline:
            time.sleep(0.01)
        assert to_tmp
        to_tmp.clear()
        ctx = confined_context(world)
        for sock in (host_tmp, in_project):
            out = await run_in_sandbox(ctx, CONNECT_UNIX.format(sock=sock), grant)
            assert "connected" not in out, out
    assert to_tmp == [] and to_project == []


# --- masks under git -----------------------------------------------------------------------

async def test_git_never_sees_or_stages_a_mask_of_a_tracked_secret(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    ctx = confined_context(world, deny=("Read(./.env)",))
    read = await run_in_sandbox(ctx, "git status --porcelain; cat .env; git diff --stat",
                                READ_ONLY_GRANT)
    assert "sk-live" not in read and "Permission denied" in read
    assert ".env" not in read.replace("cat: .env: Permission denied", "")  # no phantom change
    wrote = await run_in_sandbox(
        ctx, f"echo change >> app.py && git add -A && {COMMIT} work && git show --stat HEAD",
        RULE_GIT,
    )
    assert "app.py" in wrote and ".env" not in wrote, wrote
    assert world.user_runs("git show HEAD:.env") == "API_KEY=sk-live-123\n"
    assert world.user_runs("git status --porcelain") == ""


async def test_a_racily_clean_secret_makes_git_fail_rather_than_stage_its_mask(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    world.user_runs("echo API_KEY=sk-live-456 > .env && git add .env && git commit -qm key")
    ctx = confined_context(world, deny=("Read(./.env)",))
    # .env changed in the same second as the index: git must read it, and cannot.
    out = await run_in_sandbox(ctx, f"echo more >> app.py; git add -A; {COMMIT} w", RULE_GIT)
    assert "sk-live" not in out
    assert world.user_runs("git show :.env") == "API_KEY=sk-live-456\n"  # index: real
    assert world.user_runs("git show HEAD:.env") == "API_KEY=sk-live-456\n"


async def test_a_masked_directory_cannot_be_renamed_or_entered(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    (world.project / "private").mkdir()
    (world.project / "private" / "notes.txt").write_text("TOP-SECRET-NOTE\n")
    ctx = confined_context(world, deny=("Read(./private/**)",))
    out = await run_in_sandbox(ctx, "mv private p2; cat p2/notes.txt private/notes.txt", RULE)
    assert "TOP-SECRET-NOTE" not in out and (world.project / "private" / "notes.txt").exists()
    ctx.bash_cwd = world.project / "private"  # as after `cd private` in an earlier call
    with pytest.raises(ToolError, match="masked"):
        await run_in_sandbox(ctx, "cat notes.txt", RULE)


async def test_masks_hold_behind_many_junk_files_and_in_skipped_directories(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    junk = world.project / "aaa-junk"
    junk.mkdir()
    for i in range(60_000):  # more than the old walk's whole budget, walked first
        (junk / f"{i}").touch()
    deep = world.project / "target" / "release"
    deep.mkdir(parents=True)
    (deep / "token.secret").write_text("DEEP-TOKEN\n")
    (world.project / "zz.secret").write_text("LATE-TOKEN\n")
    ctx = confined_context(world, deny=("Read(**/*.secret)",))
    out = await run_in_sandbox(
        ctx, f"{PY} -c \"print(open('target/release/token.secret').read(), "
        "open('zz.secret').read())\"", RULE,
    )
    assert "DEEP-TOKEN" not in out and "LATE-TOKEN" not in out and "Permission denied" in out


async def test_aistack_home_is_not_writable_from_the_sandbox(tmp_path: Path) -> None:
    world = make_world(tmp_path, project_is_home=True)
    own = world.home / ".aistack" / "projects" / "p" / "shadow.git"
    own.mkdir(parents=True)
    (own / "config").write_text("[core]\n")
    ctx = confined_context(world)
    out = await run_in_sandbox(ctx, f"{FSMON.replace('{marker}', 'M')} >> {own}/config", RULE)
    assert "Read-only file system" in out
    assert (own / "config").read_text() == "[core]\n"


# --- everyday work still runs ----------------------------------------------------------------

EVERYDAY: list[tuple[str, ExecGrant]] = [
    ("git status && git diff && git log --oneline -1 && git branch", READ_ONLY_GRANT),
    ("rg -n hi . && find . -name '*.py' -not -path './.git/*' && ls -la && wc -l app.py",
     READ_ONLY_GRANT),
    (f"echo change >> app.py && git add -A && {COMMIT} work && git log --oneline -1",
     RULE_GIT),
    ("git checkout -q -b topic && git stash list && git switch -q - && git branch -d topic",
     RULE_GIT),
    ("printf 'all:\\n\\techo built > out.txt\\n' > Makefile && make && cat out.txt", RULE),
    ("git init -q fresh && cd fresh && echo x > f && git add f && "
     f"{COMMIT} first && git log --oneline", RULE_GIT),
    (f"{sys.executable} -m pytest -q -p no:cacheprovider test_app.py", RULE),
    ("mkdir -p build && echo x > /tmp/scratch.txt && cp /tmp/scratch.txt build/ && "
     "cat build/scratch.txt", RULE),
]


@pytest.mark.parametrize(("command", "grant"), EVERYDAY, ids=[c for c, _ in EVERYDAY])
async def test_everyday_commands_still_work(
    command: str, grant: ExecGrant, tmp_path: Path
) -> None:
    world = make_world(tmp_path)
    (world.project / "test_app.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    world.user_runs(f"git add -A && {COMMIT} tests")
    ctx = confined_context(world, deny=("Read(./.env)",))
    out = await run_in_sandbox(ctx, command, grant)
    assert "Exit code" not in out, out
    assert not any(p.name.startswith(".git.quarantined") for p in world.project.iterdir())
    assert world.user_runs("git status --porcelain --ignored=no -- .env") == ""
