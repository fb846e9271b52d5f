"""`aistack memory list|search|add|forget|pin|unpin|edit|export|import`: review memory.

Plain text output, one memory per line (`m12  semantic  2025-01-03  [pinned]  text`), so
it pipes into grep. Bad ids and files get a one-line error and exit code 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("memory", help="inspect and edit long-term memory")
    sub = p.add_subparsers(dest="action")
    lst = sub.add_parser("list", help="list memories of this project and your profile (default)")
    lst.add_argument("--kind", action="append", default=[],
                     help="only this kind: profile, semantic or episodic (repeatable)")
    lst.add_argument("-n", "--limit", type=int, default=100)
    search = sub.add_parser("search", help="search memories and past sessions")
    search.add_argument("query", nargs="+")
    search.add_argument("-n", "--limit", type=int, default=10)
    add = sub.add_parser("add", help="remember a fact")
    add.add_argument("text", nargs="+")
    add.add_argument("--kind", default="semantic", help="profile, semantic or episodic")
    add.add_argument("--pin", action="store_true", help="always inject this memory")
    forget = sub.add_parser("forget", help="delete a memory")
    forget.add_argument("id")
    pin = sub.add_parser("pin", help="always inject a memory (survives compaction)")
    pin.add_argument("id")
    unpin = sub.add_parser("unpin", help="stop always injecting a memory")
    unpin.add_argument("id")
    edit = sub.add_parser("edit", help="replace a memory's text")
    edit.add_argument("id")
    edit.add_argument("text", nargs="+")
    export = sub.add_parser("export", help="write memories as JSONL (stdout by default)")
    export.add_argument("file", nargs="?")
    imp = sub.add_parser("import", help="read memories from a JSONL file")
    imp.add_argument("file")


def _day(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d")


def _line(record: Any) -> str:
    pin = "  [pinned]" if record.pinned else ""
    text = " ".join(record.content.split())
    return f"{record.label:6} {record.kind:9} {_day(record.created_at)}{pin}  {text}"


async def run(args: argparse.Namespace, home: Path, project_root: Path) -> int:
    from aistack_tui.memory.manager import MemoryManager, parse_memory_id
    from aistack_tui.memory.models import MemoryOperationError
    from aistack_tui.storage.db import StorageError

    out = sys.stdout
    action = getattr(args, "action", None) or "list"
    try:
        manager = await MemoryManager.open(home, project_root, background=False)
    except (MemoryOperationError, StorageError) as e:
        sys.stderr.write(f"aistack memory: {e}\n")
        return EXIT_USAGE
    try:
        if action == "list":
            records = await manager.list(getattr(args, "kind", []) or (),
                                         getattr(args, "limit", 100))
            if not records:
                out.write("no memories yet (add one with `aistack memory add TEXT`)\n")
            for record in records:
                out.write(_line(record) + "\n")
        elif action == "search":
            await manager.reembed()
            hits = await manager.search(" ".join(args.query), args.limit)
            if not hits:
                out.write("no matches\n")
            for hit in hits:
                if hit.record is not None:
                    out.write(_line(hit.record) + "\n")
                else:
                    out.write(f"{hit.label}  {_day(hit.created_at)}  {hit.role:9} {hit.text}\n")
        elif action == "add":
            record = await manager.write(" ".join(args.text), args.kind, source="user",
                                         pinned=args.pin)
            verb = "merged into" if record.times_seen > 1 else "remembered as"
            out.write(f"{verb} {record.label}\n")
        elif action == "forget":
            await manager.forget(parse_memory_id(args.id))
            out.write(f"forgot m{parse_memory_id(args.id)}\n")
        elif action in ("pin", "unpin"):
            memory_id = parse_memory_id(args.id)
            await manager.pin(memory_id, action == "pin")
            out.write(f"{action}ned m{memory_id}\n")
        elif action == "edit":
            record = await manager.edit(parse_memory_id(args.id), " ".join(args.text))
            out.write(_line(record) + "\n")
        elif action == "export":
            lines = [json.dumps(r, ensure_ascii=False) for r in await manager.export_records()]
            text = "".join(line + "\n" for line in lines)
            if args.file:
                Path(args.file).write_text(text, encoding="utf-8")
                out.write(f"exported {len(lines)} memories to {args.file}\n")
            else:
                out.write(text)
        elif action == "import":
            try:
                lines = Path(args.file).read_text(encoding="utf-8").splitlines()
            except OSError as e:
                raise MemoryOperationError(f"cannot read {args.file}: {e.strerror}") from e
            stored, merged = await manager.import_records(lines)
            out.write(f"imported {stored} memories ({merged} merged into existing ones)\n")
        return EXIT_OK
    except (MemoryOperationError, StorageError) as e:
        sys.stderr.write(f"aistack memory: {e}\n")
        return EXIT_USAGE
    finally:
        await manager.close()
