"""Plan mode end to end against the fake LLM server: present, approve or reject, execute."""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from aistack_tui.agent import events as ev
from aistack_tui.agent.planning import PLAN_MODE_PROMPT
from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.session.live import LiveSession
from fakes.fake_llm import FakeLLMServer, RecordedRequest, ToolCall, Turn
from tests.agent.test_runtime import collect, start

PLAN = [
    {"id": "A", "title": "Create a.txt", "detail": "Write a.txt containing alpha"},
    {"id": "B", "title": "Create b.txt", "detail": "Write b.txt containing beta"},
    {"id": "C", "title": "Combine", "depends_on": ["A", "B"],
     "detail": "Write c.txt with both results"},
]


class SnapshotApprover:
    """The person at the confirm dialog; records what the disk and mode were at that moment."""

    def __init__(self, answer: ApprovalDecision, root: Path) -> None:
        self.answer = answer
        self.root = root
        self.session: LiveSession | None = None
        self.requests: list[ApprovalRequest] = []
        self.files_at_approval: list[str] = []
        self.mode_at_approval = ""

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        self.files_at_approval = sorted(p.name for p in self.root.glob("*.txt"))
        assert self.session is not None
        self.mode_at_approval = self.session.engine.mode
        return self.answer


def ended(events: list[ev.AgentEvent]) -> ev.TurnEnded:
    last = events[-1]
    assert isinstance(last, ev.TurnEnded)
    return last


def first_user_text(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"][0])


def answered(request: RecordedRequest) -> bool:
    return "tool_result" in json.dumps(request.body["messages"])


class PlanScript:
    """Routes each request to the parent or to the subagent of one step, recording order."""

    def __init__(self, plan: list[dict[str, object]], fail: str = "") -> None:
        self.plan = plan
        self.fail = fail
        self.order: list[tuple[str, int]] = []
        self.step_prompts: dict[str, str] = {}
        self.parent_requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Turn:
        first = first_user_text(request)
        for step in ("A", "B", "C"):
            if f"Your step: [{step}]" in first:
                return self._child(step, request)
        with self._lock:
            self.parent_requests.append(request)
            n = len(self.parent_requests)
        if n == 1:  # an edit while planning: denied by the mode
            return Turn(tool_calls=[ToolCall("Write", {"file_path": "early.txt",
                                                      "content": "too soon"})])
        if n == 2:
            return Turn(text="Here is my plan.",
                        tool_calls=[ToolCall("PresentPlan", {"goal": "three files",
                                                             "steps": self.plan})])
        return Turn(text="All done.")

    def _child(self, step: str, request: RecordedRequest) -> Turn:
        second = answered(request)
        with self._lock:
            self.order.append((step, 2 if second else 1))
            self.step_prompts.setdefault(step, first_user_text(request))
        if second:
            if step == self.fail:
                return Turn(text="STEP FAILED: the disk was read-only")
            return Turn(text=f"step {step} wrote {step.lower()}.txt with token-{step}")
        content = f"{step} ran"
        # A slow first answer for A and B: if they ran one after the other, A's second
        # request would reach the server before B's first.
        return Turn(text="Working on it now.", delay=0.04 if step != "C" else 0.0,
                    tool_calls=[ToolCall("Write", {"file_path": f"{step.lower()}.txt",
                                                  "content": content})])


async def run_plan(git_repo: Path, script: PlanScript, answer: ApprovalDecision,
                   before_close: Callable[[LiveSession], Awaitable[None]] | None = None,
                   ) -> tuple[LiveSession, SnapshotApprover, list[ev.AgentEvent],
                              FakeLLMServer]:
    approver = SnapshotApprover(answer, git_repo)
    with FakeLLMServer([Turn(respond=script) for _ in range(12)]) as server:
        session = await start(server, "anthropic", approver, permission_mode="plan")
        approver.session = session
        events = await collect(session.agent.run("Add three files"))
        if before_close is not None:
            await before_close(session)
        await session.close()
    return session, approver, events, server


async def test_approved_plan_runs_independent_steps_together_then_dependants(
    git_repo: Path,
) -> None:
    script = PlanScript(PLAN)
    written: dict[str, str] = {}

    async def undo(session: LiveSession) -> None:
        written.update({p.name: p.read_text() for p in git_repo.glob("*.txt")})
        assert session.checkpoints is not None
        undone = await session.checkpoints.undo_last(session.info.id)
        assert undone.ok, undone.message

    session, approver, events, server = await run_plan(
        git_repo, script, ApprovalDecision("once"), before_close=undo)
    assert ended(events).reason == "completed" and ended(events).final_text == "All done."
    # The early edit was denied by plan mode; nothing was on disk when the user was asked.
    assert not (git_repo / "early.txt").exists()
    assert approver.files_at_approval == [] and approver.mode_at_approval == "plan"
    shown = approver.requests[0].display.detail
    assert "1. [A] Create a.txt" in shown and "3. [C] Combine" in shown
    assert "after: 1 [A], 2 [B]" in shown and "Runs in 2 stages: (A, B) → C" in shown
    # After approval the steps edited files and the mode stayed acceptEdits; /undo takes
    # the whole plan's changes back (the snapshot before PresentPlan ran).
    assert written == {"a.txt": "A ran", "b.txt": "B ran", "c.txt": "C ran"}
    assert list(git_repo.glob("*.txt")) == []
    assert session.engine.mode == "acceptEdits"
    # A and B ran concurrently: both first requests came before either second one; C after.
    assert {script.order[0], script.order[1]} == {("A", 1), ("B", 1)}
    assert script.order[-2:] == [("C", 1), ("C", 2)]
    # C was given the results of A and B.
    assert "token-A" in script.step_prompts["C"] and "token-B" in script.step_prompts["C"]
    assert "token-A" not in script.step_prompts["B"]
    # The parent got a per-step report, and the system prompt explains plan mode.
    report = session.agent.messages[4].tool_results()[0]
    assert not report.is_error
    assert report.text().startswith("Plan finished: 3 of 3 steps completed")
    assert "## [C] Combine — completed" in report.text()
    assert "acceptEdits" in report.text()
    assert PLAN_MODE_PROMPT.splitlines()[1] in json.dumps(script.parent_requests[0].body["system"])
    # The children had neither Task nor PresentPlan; their events reached the stream.
    child = next(r for r in server.model_requests if "Your step: [A]" in first_user_text(r))
    child_tools = {t["name"] for t in child.body["tools"]}
    assert "Write" in child_tools and not child_tools & {"Task", "PresentPlan"}
    nested = {e.description for e in events if isinstance(e, ev.SubagentEvent)}
    assert nested == {"[A] Create a.txt", "[B] Create b.txt", "[C] Combine"}


async def test_rejected_plan_edits_nothing_and_feedback_reaches_model(git_repo: Path) -> None:
    script = PlanScript(PLAN)
    session, approver, events, _server = await run_plan(
        git_repo, script, ApprovalDecision("reject", "Put everything in one file"))
    assert ended(events).reason == "completed" and len(approver.requests) == 1
    assert list(git_repo.glob("*.txt")) == []
    assert session.engine.mode == "plan" and script.order == []
    last = json.dumps(script.parent_requests[-1].body["messages"][-1])
    assert "rejected the plan" in last and "Put everything in one file" in last
    assert [d.tool_name for d in session.agent.runner.denials] == ["Write", "PresentPlan"]


async def test_cyclic_plan_is_returned_to_the_model_without_asking(git_repo: Path) -> None:
    cyclic = [{"id": "A", "title": "a", "depends_on": ["B"]},
              {"id": "B", "title": "b", "depends_on": ["A"]}]
    script = PlanScript(cyclic)
    session, approver, events, _server = await run_plan(
        git_repo, script, ApprovalDecision("once"))
    assert ended(events).reason == "completed" and approver.requests == []
    result = session.agent.messages[4].tool_results()[0]
    assert result.is_error and "cycle" in result.text() and "'A' → 'B' → 'A'" in result.text()
    assert session.engine.mode == "plan" and script.order == []


async def test_failed_step_stops_its_dependants(git_repo: Path) -> None:
    script = PlanScript(PLAN, fail="A")
    session, _approver, _events, _server = await run_plan(
        git_repo, script, ApprovalDecision("once"))
    report = session.agent.messages[4].tool_results()[0]
    text = report.text()
    assert report.is_error
    assert "## [A] Create a.txt — failed" in text and "the disk was read-only" in text
    assert "## [B] Create b.txt — completed" in text
    assert "## [C] Combine — skipped" in text and "'A' (failed)" in text
    assert not any(step == "C" for step, _ in script.order)
    assert not (git_repo / "c.txt").exists()
