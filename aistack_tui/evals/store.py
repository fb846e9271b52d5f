"""Eval runs and per-task results in `$AISTACK_HOME/evals.db`, so runs can be compared."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import aiosqlite

from aistack_tui.storage.db import open_database

DB_NAME = "evals.db"
NAMESPACE = "evals"


@dataclass(frozen=True, slots=True)
class TaskResult:
    task: str
    passed: bool
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_s: float
    reason: str
    """How the agent's run ended (completed, max_turns, error, timeout, ...)."""
    detail: str = ""
    """The checker's output tail or the error, for a failed task."""


@dataclass(frozen=True, slots=True)
class EvalRun:
    id: str
    model: str
    started_at: float
    finished_at: float | None
    results: list[TaskResult]

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)


async def _create_tables(db: aiosqlite.Connection) -> None:
    await db.execute(
        "CREATE TABLE eval_runs (id TEXT PRIMARY KEY, model TEXT NOT NULL,"
        " started_at REAL NOT NULL, finished_at REAL)"
    )
    await db.execute(
        "CREATE TABLE eval_results (run_id TEXT NOT NULL REFERENCES eval_runs(id)"
        " ON DELETE CASCADE, task TEXT NOT NULL, passed INTEGER NOT NULL,"
        " turns INTEGER NOT NULL, input_tokens INTEGER NOT NULL,"
        " output_tokens INTEGER NOT NULL, cost_usd REAL, duration_s REAL NOT NULL,"
        " reason TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY (run_id, task))"
    )


MIGRATIONS = [_create_tables]


class EvalStore:
    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    @classmethod
    async def open(cls, home: Path) -> EvalStore:
        db, _ = await open_database(home / DB_NAME, MIGRATIONS, namespace=NAMESPACE,
                                    load_vec=False)
        return cls(db)

    async def start_run(self, model: str) -> str:
        run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        await self._db.execute(
            "INSERT INTO eval_runs(id, model, started_at) VALUES (?, ?, ?)",
            (run_id, model, time.time()),
        )
        await self._db.commit()
        return run_id

    async def add_result(self, run_id: str, r: TaskResult) -> None:
        await self._db.execute(
            "INSERT OR REPLACE INTO eval_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, r.task, int(r.passed), r.turns, r.input_tokens, r.output_tokens,
             r.cost_usd, r.duration_s, r.reason, r.detail),
        )
        await self._db.commit()

    async def finish_run(self, run_id: str) -> None:
        await self._db.execute(
            "UPDATE eval_runs SET finished_at = ? WHERE id = ?", (time.time(), run_id)
        )
        await self._db.commit()

    async def resolve(self, key: str) -> str | None:
        """A run id from an exact id, a unique prefix, or `latest` / `previous`."""
        if key in ("latest", "previous"):
            cur = await self._db.execute(
                "SELECT id FROM eval_runs ORDER BY started_at DESC, rowid DESC LIMIT 2"
            )
            rows = list(await cur.fetchall())
            index = 0 if key == "latest" else 1
            return str(rows[index][0]) if len(rows) > index else None
        cur = await self._db.execute(
            "SELECT id FROM eval_runs WHERE id >= ? AND id < ? LIMIT 2",
            (key, key + "\U0010ffff"),
        )
        rows = list(await cur.fetchall())
        return str(rows[0][0]) if len(rows) == 1 else None

    async def get(self, run_id: str) -> EvalRun | None:
        cur = await self._db.execute("SELECT * FROM eval_runs WHERE id = ?", (run_id,))
        row = await cur.fetchone()
        if row is None:
            return None
        cur = await self._db.execute(
            "SELECT task, passed, turns, input_tokens, output_tokens, cost_usd, duration_s,"
            " reason, detail FROM eval_results WHERE run_id = ? ORDER BY task",
            (run_id,),
        )
        results = [
            TaskResult(r[0], bool(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], r[8])
            for r in await cur.fetchall()
        ]
        return EvalRun(row["id"], row["model"], row["started_at"], row["finished_at"], results)

    async def runs(self, limit: int = 20) -> list[EvalRun]:
        cur = await self._db.execute(
            "SELECT id FROM eval_runs ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,)
        )
        out: list[EvalRun] = []
        for row in await cur.fetchall():
            run = await self.get(str(row[0]))
            if run is not None:
                out.append(run)
        return out

    async def close(self) -> None:
        await self._db.close()
