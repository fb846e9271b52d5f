"""`aistack undo [--session ID] [--force]` and `aistack rewind [TURN] [--session ID]`.

Undo outside the TUI: restore the files the agent changed in the last turn (or since a
chosen turn) of a session, by default the latest session of this project. A file changed
by hand since the agent's edit is reported and left alone unless `--force` is given.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.checkpoints.manager import UndoResult
    from aistack_tui.session.config import RunConfig

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    undo = subparsers.add_parser(
        "undo", help="restore the files changed by the agent's last turn"
    )
    undo.add_argument("--session", metavar="ID", help="session id or prefix (default: latest)")
    undo.add_argument(
        "--force", action="store_true", help="overwrite files changed by hand since the agent"
    )
    rewind = subparsers.add_parser(
        "rewind", help="restore files and conversation to before a turn (lists turns without one)"
    )
    rewind.add_argument("turn", nargs="?", metavar="TURN", help="turn number or id")
    rewind.add_argument("--session", metavar="ID", help="session id or prefix (default: latest)")
    rewind.add_argument(
        "--force", action="store_true", help="overwrite files changed by hand since the agent"
    )


async def run(args: argparse.Namespace, config: RunConfig) -> int:
    from aistack_tui.checkpoints.manager import CheckpointError, CheckpointManager
    from aistack_tui.checkpoints.wiring import rewind_stored_session
    from aistack_tui.sessions.models import SessionError
    from aistack_tui.sessions.sqlite_store import open_session_store
    from aistack_tui.storage.db import StorageError

    try:
        store = await open_session_store(config.home)
    except StorageError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return EXIT_FAILED
    try:
        try:
            if args.session:
                info = await store.get(args.session)
                if info is None:
                    sys.stderr.write(
                        f"aistack: no session {args.session!r}: list them with `aistack sessions`\n"
                    )
                    return EXIT_USAGE
            else:
                info = await store.latest(config.project_root)
                if info is None:
                    sys.stderr.write("aistack: no session in this project yet: nothing to undo\n")
                    return EXIT_FAILED
        except SessionError as e:
            sys.stderr.write(f"aistack: {e}\n")
            return EXIT_USAGE

        manager = CheckpointManager(config.home, config.project_root)
        try:
            if args.command == "rewind" and not args.turn:
                return _list_turns(manager, info.id)
            if args.command == "rewind":
                # Files and the stored conversation both go back, as /rewind does.
                result = await rewind_stored_session(
                    store, manager, info.id, args.turn, force=args.force
                )
            else:
                result = await manager.undo_last(info.id, force=args.force)
        except CheckpointError as e:
            sys.stderr.write(f"aistack: {e}\n")
            return EXIT_FAILED
        return _report(result)
    finally:
        await store.close()


def _list_turns(manager: Any, session_id: str) -> int:
    turns = manager.list_turns(session_id)
    if not turns:
        sys.stdout.write(f"no checkpoints in session {session_id}\n")
        return EXIT_OK
    for n, turn in enumerate(turns, start=1):
        when = dt.datetime.fromtimestamp(turn.created_at).strftime("%Y-%m-%d %H:%M")
        sys.stdout.write(f"{n:3d}  {turn.turn_id}  {when}  {turn.label}\n")
    return EXIT_OK


def _report(result: UndoResult) -> int:
    if not result.ok:
        sys.stderr.write(f"aistack: {result.message}\n")
        for path in result.conflicts:
            sys.stderr.write(f"  conflict: {path}\n")
        return EXIT_FAILED
    sys.stdout.write(result.message + "\n")
    for path in result.restored:
        sys.stdout.write(f"  restored {path}\n")
    for path in result.removed:
        sys.stdout.write(f"  removed  {path}\n")
    if result.messages_cut:
        sys.stdout.write(f"  cut {result.messages_cut} message(s) from the conversation\n")
    return EXIT_OK
