"""`aistack index [PATH]`: build or refresh a project's code index, with a progress bar."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "index",
        help="build or refresh the code index (tree-sitter symbols, chunks, vectors)",
        description="Index PATH (default: the project root). Only files changed since the "
        "last run are parsed again.",
    )
    p.add_argument("path", nargs="?", help="directory to index (default: the project root)")
    p.add_argument(
        "--trust-project", action="store_true",
        help="apply this project's settings even if it is not trusted yet",
    )


async def _run(home: Path, root: Path) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from aistack_tui.knowledge import KnowledgeIndex

    console = Console(stderr=True)
    index = await KnowledgeIndex.open(home, root)
    try:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("scanning", total=None)

            def on_phase(phase: str) -> None:
                bar.update(task, description=phase)

            def on_progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            stats = await index.refresh(on_progress, on_phase=on_phase)
    finally:
        await index.close()
    sys.stdout.write(
        f"indexed {root}: {stats.files_total} files, {stats.symbols_total} symbols, "
        f"{stats.chunks_total} chunks ({stats.parsed} parsed, {stats.unchanged} unchanged, "
        f"{stats.removed} removed) in {stats.seconds:.1f}s\n"
    )
    return 0


def run(args: argparse.Namespace, home: Path, project_root: Path) -> int:
    raw = getattr(args, "path", None)
    root = Path(raw).expanduser() if raw else project_root
    if not root.is_dir():
        sys.stderr.write(f"aistack index: {raw} is not a directory; give a project folder\n")
        return 2
    from aistack_tui.storage.db import StorageError

    try:
        return asyncio.run(_run(home, root.resolve()))
    except KeyboardInterrupt:
        return 130
    except (StorageError, OSError) as e:
        sys.stderr.write(f"aistack index: {e}\n")
        return 1
