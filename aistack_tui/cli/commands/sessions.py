"""`aistack sessions [list|search QUERY]`: the sessions of this project."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.bootstrap import RunConfig


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sessions", help="list or search this project's sessions")
    sub = p.add_subparsers(dest="action")
    lst = sub.add_parser("list", help="list sessions (default)")
    lst.add_argument("--all", action="store_true", help="sessions of every project")
    lst.add_argument("-n", "--limit", type=int, default=30)
    search = sub.add_parser("search", help="full-text search over past sessions' messages")
    search.add_argument("query", nargs="+")
    search.add_argument("-n", "--limit", type=int, default=20)


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
