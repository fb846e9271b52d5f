"""`aistack sessions [list|search QUERY]`: the sessions of this project."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.sessions.sqlite_store import SqliteSessionStore


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sessions", help="list or search this project's sessions")
    sub = p.add_subparsers(dest="action")
    lst = sub.add_parser("list", help="list sessions (default)")
    lst.add_argument("--all", action="store_true", help="sessions of every project")
    lst.add_argument("-n", "--limit", type=int, default=30)
    search = sub.add_parser("search", help="full-text search over past sessions' messages")
    search.add_argument("query", nargs="+")
    search.add_argument("-n", "--limit", type=int, default=20)
    export = sub.add_parser("export", help="write a session as Markdown or JSONL")
    export.add_argument("id", help="session id or prefix")
    export.add_argument("--format", choices=("md", "jsonl"), default="md")
    export.add_argument("-o", "--output", help="file to write (default: stdout)")


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


async def run(args: argparse.Namespace, config: RunConfig) -> int:
    from aistack_tui.sessions.sqlite_store import open_session_store

    store = await open_session_store(config.home)
    out = sys.stdout
    try:
        if getattr(args, "action", None) == "search":
            hits = await store.search(" ".join(args.query), config.project_root, args.limit)
            if not hits:
                out.write("no matches\n")
            for hit in hits:
                out.write(f"{hit.session_id[:8]}  {_when(hit.created_at)}  {hit.role:9} "
                          f"{hit.snippet}\n")
            return 0
        if getattr(args, "action", None) == "export":
            return await _export(store, args)
        root = None if getattr(args, "all", False) else config.project_root
        sessions = await store.list(root, limit=getattr(args, "limit", 30))
        if not sessions:
            out.write("no sessions yet in this project\n")
        for s in sessions:
            cost = f"${s.cost_usd:.4f}" if s.cost_usd else "-"
            out.write(f"{s.id}  {_when(s.updated_at)}  {s.message_count:4d} msgs  {cost:>9}  "
                      f"{s.model}  {s.title}\n")
        return 0
    finally:
        await store.close()


async def _export(store: SqliteSessionStore, args: argparse.Namespace) -> int:
    from pathlib import Path

    from aistack_tui.sessions.export import to_jsonl, to_markdown
    from aistack_tui.sessions.models import SessionError

    try:
        info = await store.get(args.id)
    except SessionError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return 2
    if info is None:
        sys.stderr.write(f"aistack: no session {args.id!r}\n")
        return 2
    messages = await store.messages(info.id)
    text = to_jsonl(messages) if args.format == "jsonl" else to_markdown(info, messages)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
