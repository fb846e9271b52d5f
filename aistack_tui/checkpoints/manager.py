"""Checkpoints per turn, and undo / rewind that restore files byte for byte.

A *turn* is one user prompt and everything the agent did for it. Before the first call
that may change files in a turn (Edit, Write, Bash, ...), the working tree is committed to
the project's shadow repository (`before`); after each batch of tool results it is
committed again (`after`). Undo restores every path that differs between a turn's
`before` and `after` to its `before` bytes, removing files the agent created.

A path whose current content differs from the agent's last `after` was changed by hand
since: undo refuses to overwrite it and reports a conflict unless asked to `force`.
Restoring runs outside any sandbox, so every path is walked beneath the project without
following a symlink (`aistack_tui.beneath`): a link at the path itself is replaced, a
path behind a link (one a command planted, perhaps gitignored) is refused and reported.
The turn log is a small JSON file per session beside the shadow repository; the commits
are chained under `refs/aistack/sessions/<id>` so git never garbage-collects them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aistack_tui.atomic_file import write_atomically
from aistack_tui.beneath import Location, UnsafePath, locate
from aistack_tui.checkpoints.shadow import ShadowGitError, ShadowRepo, TreeEntry
from aistack_tui.storage.paths import project_data_dir


class CheckpointError(Exception):
    """Checkpoints cannot work here (unsafe project root, git missing); says why."""


@dataclass(slots=True)
class TurnRecord:
    """One turn's checkpoints: the commit before its first change and after its last."""

    turn_id: str
    label: str
    before: str
    after: str | None = None
    created_at: float = field(default_factory=time.time)
    undone: bool = False


@dataclass(slots=True)
class UndoResult:
    """What an undo or rewind did, or why it did nothing."""

    ok: bool
    message: str
    restored: list[str] = field(default_factory=list)
    """Paths written back to their earlier bytes."""
    removed: list[str] = field(default_factory=list)
    """Paths the agent had created, now deleted."""
    conflicts: list[str] = field(default_factory=list)
    """Paths changed by hand after the agent's last edit; left alone unless forced."""
    refused: list[str] = field(default_factory=list)
    """Paths not restored because a directory on the way is now a symlink (it could
    lead anywhere, outside the project included); they are left as they are."""
    turns: list[str] = field(default_factory=list)
    """The turn ids that were undone, newest first."""
    messages_cut: int = 0
    """Stored conversation messages a rewind deleted (see checkpoints.wiring)."""
    prompt: str = ""
    """The text of the prompt a rewind cut the conversation at, so a front end can offer
    it again for editing (read from the store: after a compaction it is only there)."""


class CheckpointManager:
    """Snapshots and restores one project's working tree for any number of sessions."""

    def __init__(self, home: Path, project_root: Path) -> None:
        self.project_root = project_root.resolve()
        self.data_dir = project_data_dir(home, self.project_root)
        self.repo = ShadowRepo(self.data_dir / "shadow.git", self.project_root)
        self._lock = asyncio.Lock()
        self.disabled_reason = _unsafe_root_reason(self.project_root)

    # --- recording ---------------------------------------------------------------------

    async def snapshot(self, session_id: str, turn_id: str, label: str) -> str | None:
        """Commit the tree before the first change of `turn_id`; later calls are free.

        Returns the turn's `before` commit, or None when checkpoints are off here.
        """
        if self.disabled_reason:
            return None
        async with self._lock:
            turns = self._load(session_id)
            for turn in turns:
                if turn.turn_id == turn_id and not turn.undone:
                    return turn.before
            commit = await self._commit_current(session_id, f"before: {label}")
            turns.append(TurnRecord(turn_id=turn_id, label=label, before=commit))
            self._save(session_id, turns)
            return commit

    async def record_after(self, session_id: str) -> str | None:
        """Commit the tree as the agent left it, for the session's latest open turn."""
        if self.disabled_reason:
            return None
        async with self._lock:
            turns = self._load(session_id)
            live = [t for t in turns if not t.undone]
            if not live:
                return None
            commit = await self._commit_current(session_id, f"after: {live[-1].label}")
            live[-1].after = commit
            self._save(session_id, turns)
            return commit

    def list_turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turns that changed (or tried to change) files, oldest first."""
        return [t for t in self._load(session_id) if not t.undone]

    # --- restoring ---------------------------------------------------------------------

    async def undo_last(self, session_id: str, *, force: bool = False) -> UndoResult:
        """Restore the files changed by the last turn to their state before it."""
        turns = self.list_turns(session_id)
        if not turns:
            return UndoResult(False, "nothing to undo: no checkpoints in this session")
        return await self.rewind(session_id, turns[-1].turn_id, force=force)

    async def rewind(self, session_id: str, turn_id: str, *, force: bool = False) -> UndoResult:
        """Restore the files to their state before `turn_id`, undoing it and every later turn.

        `turn_id` may also be a 1-based position in `list_turns()` or a unique id prefix.
        """
        if self.disabled_reason:
            return UndoResult(False, self.disabled_reason)
        async with self._lock:
            all_turns = self._load(session_id)
            live = [t for t in all_turns if not t.undone]
            index = _find_turn(live, turn_id)
            if index is None:
                return UndoResult(False, f"no turn {turn_id!r} in session {session_id}")
            target = live[index:]
            current = await self.repo.write_tree()
            owner: dict[str, TurnRecord] = {}
            for turn in reversed(target):  # newest first: the last turn to touch a path owns it
                after = turn.after or current
                for path in await self.repo.changed_paths(turn.before, after):
                    owner.setdefault(path, turn)
            conflicts: set[str] = set()
            for turn in target:
                mine = sorted(p for p, t in owner.items() if t is turn)
                if turn.after is not None and mine:
                    conflicts |= await self.repo.changed_paths(turn.after, current, mine)
            if conflicts and not force:
                names = ", ".join(sorted(conflicts)[:10])
                return UndoResult(
                    False,
                    f"{len(conflicts)} file(s) changed by hand since the agent's edit: {names}."
                    " Nothing was restored; use --force (or force=True) to overwrite them.",
                    conflicts=sorted(conflicts),
                )
            restored, removed, refused = await self._restore(target[0].before, sorted(owner))
            for turn in target:
                turn.undone = True
            self._save(session_id, all_turns)
            # The restored state becomes the reference for the next snapshot.
            await self._commit_current(session_id, f"undo to before: {target[0].label}")
            ids = [t.turn_id for t in reversed(target)]
            what = "the last turn" if len(target) == 1 else f"{len(target)} turns"
            return UndoResult(
                True,
                f"undid {what}: {len(restored)} file(s) restored, {len(removed)} removed"
                + (f", {len(conflicts)} overwritten by force" if conflicts else "")
                + _refused_note(refused),
                restored=restored,
                removed=removed,
                refused=refused,
                conflicts=sorted(conflicts),
                turns=ids,
            )

    async def _restore(
        self, before: str, paths: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """(restored, removed, refused): each path is walked beneath the project without
        following any symlink (`beneath.locate`, follow=False), so a link a command planted
        on the way (maybe gitignored, so never snapshotted) is never written through; a
        link at the path itself is replaced. A path behind a link is refused, not guessed."""
        entries = await self.repo.entries(before, paths)
        restored: list[str] = []
        removed: list[str] = []
        refused: list[str] = []
        for path in paths:
            entry = entries.get(path)
            data = b""
            if entry is not None and entry.mode != "160000":
                data = await self.repo.blob(entry.sha)
            try:
                with locate(self.project_root, path.split("/"), follow=False) as found:
                    if entry is None:
                        if found.remove():
                            removed.append(path)
                            found.prune_empty_parents()
                        continue
                    _write_entry(found, entry, data)
            except (UnsafePath, NotADirectoryError):
                refused.append(path)
                continue
            restored.append(path)
        return restored, removed, refused

    # --- storage -------------------------------------------------------------------------

    async def _commit_current(self, session_id: str, message: str) -> str:
        try:
            tree = await self.repo.write_tree()
            ref = f"refs/aistack/sessions/{_safe(session_id)}"
            head = (await self.repo.git("rev-parse", "-q", "--verify", ref, check=False))
            parent = head.decode().strip() or None
            if parent and await self.repo.tree_of(parent) == tree:
                return parent  # nothing changed since the last checkpoint: no new commit
            commit = await self.repo.commit(tree, parent, message)
            await self.repo.update_ref(ref, commit)
            return commit
        except FileNotFoundError as e:
            raise CheckpointError("checkpoints need git on PATH") from e
        except ShadowGitError as e:
            raise CheckpointError(str(e)) from e

    def _log_path(self, session_id: str) -> Path:
        return self.data_dir / "checkpoints" / f"{_safe(session_id)}.json"

    def _load(self, session_id: str) -> list[TurnRecord]:
        try:
            raw = json.loads(self._log_path(session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        out: list[TurnRecord] = []
        for item in raw.get("turns", []) if isinstance(raw, dict) else []:
            with contextlib.suppress(TypeError):
                out.append(TurnRecord(**item))
        return out

    def _save(self, session_id: str, turns: list[TurnRecord]) -> None:
        write_atomically(self._log_path(session_id), json.dumps(
            {"session_id": session_id, "turns": [asdict(t) for t in turns]}, indent=1))


def _refused_note(refused: list[str]) -> str:
    if not refused:
        return ""
    names = ", ".join(refused[:10]) + (" ..." if len(refused) > 10 else "")
    return (
        f"; {len(refused)} file(s) NOT restored because a directory on the way is now a "
        f"symlink (it may lead outside the project): {names}"
    )


def _find_turn(turns: list[TurnRecord], key: str) -> int | None:
    key = key.strip()
    for i, turn in enumerate(turns):
        if turn.turn_id == key:
            return i
    if key.isdigit() and 1 <= int(key) <= len(turns):
        return int(key) - 1
    matches = [i for i, t in enumerate(turns) if key and t.turn_id.startswith(key)]
    return matches[0] if len(matches) == 1 else None


def _unsafe_root_reason(root: Path) -> str:
    """Snapshotting `/` or a home directory would copy a whole disk into the shadow repo."""
    home = Path(os.environ.get("HOME", str(Path.home()))).expanduser()
    with contextlib.suppress(OSError):
        home = home.resolve()
    if root == Path(root.anchor) or root == home:
        return (
            f"checkpoints are off: {root} is a home or root directory, too large to "
            "snapshot; start aistack inside a project"
        )
    return ""


def _safe(session_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id) or "_"


def _write_entry(found: Location, entry: TreeEntry, data: bytes) -> None:
    """Put one tree entry where the walk arrived, replacing whatever is there now."""
    if entry.mode == "160000":  # a nested repository: git stores no content for it
        return
    if found.kind == "dir":
        found.remove()
    if entry.mode == "120000":
        found.symlink(os.fsdecode(data))
    else:
        found.write(data, executable=entry.mode == "100755")
