"""The approver a bus session is opened with: `decide()` puts the request on the bus and
waits for the channel's answer (an editor's permission dialog, a chat's buttons).

The runtime asks one approval at a time per session, but a stop must never leave it
waiting: `withdraw_all` answers every open request with a refusal.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.channels.messages import ApprovalClosed, ApprovalNeeded, Outbound

Deliver = Callable[[Outbound], Awaitable[None]]

STOPPED_FEEDBACK = "The user stopped the turn before answering this request."


@dataclass
class _Pending:
    future: asyncio.Future[ApprovalDecision]
    withdrawn: bool = False


class BusApprover:
    """One session's approvals, answered through the bus."""

    def __init__(self, key: str, deliver: Deliver) -> None:
        self.key = key
        self._deliver = deliver
        self._pending: dict[str, _Pending] = {}
        self._ids = itertools.count(1)

    @property
    def pending(self) -> list[str]:
        return list(self._pending)

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        request_id = f"{next(self._ids)}"
        pending = _Pending(asyncio.get_running_loop().create_future())
        self._pending[request_id] = pending
        decision: ApprovalDecision | None = None
        try:
            await self._deliver(ApprovalNeeded(self.key, request_id, request))
            decision = await pending.future
            return decision
        finally:
            self._pending.pop(request_id, None)
            await self._deliver(ApprovalClosed(
                self.key, request_id,
                approved=decision is not None and decision.approved,
                withdrawn=decision is None or pending.withdrawn,
            ))

    def answer(self, request_id: str, decision: ApprovalDecision) -> bool:
        """Settle one request; False when it is unknown or already settled (a second
        press of the same button, an answer after a stop)."""
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return False
        pending.future.set_result(decision)
        return True

    def withdraw_all(self, feedback: str = STOPPED_FEEDBACK) -> int:
        """Refuse every open request (the turn is being stopped); returns how many."""
        count = 0
        for pending in self._pending.values():
            if not pending.future.done():
                pending.withdrawn = True
                pending.future.set_result(ApprovalDecision("reject", feedback))
                count += 1
        return count
