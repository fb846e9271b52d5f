"""A scripted "model" for the eval tasks: per task, the tool calls that solve it.

The fake LLM server calls `respond` for every request; the task is recognised by the
first user message (the task prompt) and the step by how many answers the model has
already given in that conversation, so tasks can run in any order.
"""

from __future__ import annotations

import sys
from typing import Any

from aistack_tui.evals.tasks import load_tasks
from fakes.fake_llm import RecordedRequest, ToolCall, Turn


def read(*paths: str) -> Turn:
    return Turn(tool_calls=[ToolCall("Read", {"file_path": p}) for p in paths], usage=(120, 15))


def edit(path: str, old: str, new: str, replace_all: bool = False) -> ToolCall:
    args: dict[str, Any] = {"file_path": path, "old_string": old, "new_string": new}
    if replace_all:
        args["replace_all"] = True
    return ToolCall("Edit", args)


def step(*calls: ToolCall) -> Turn:
    return Turn(tool_calls=list(calls), usage=(150, 40))


DONE = Turn(text="Done.", usage=(200, 5))

SOLUTIONS: dict[str, list[Turn]] = {
    "fix-syntax-error": [
        read("calc.py"), step(edit("calc.py", "def add(a, b)\n", "def add(a, b):\n")), DONE],
    "make-failing-test-pass": [
        read("stack.py"),
        step(edit("stack.py", "self.items.pop(0)", "self.items.pop()")),
        step(ToolCall("Bash", {"command": f"{sys.executable} test_stack.py"})),
        DONE],
    "rename-across-files": [
        read("utils.py", "main.py", "report.py"),
        step(edit("utils.py", "def fetch_data", "def load_data"),
             edit("main.py", "fetch_data", "load_data", replace_all=True),
             edit("report.py", "utils.fetch_data", "utils.load_data")),
        DONE],
    "add-cli-flag": [
        read("greet.py"),
        step(edit("greet.py", "    parser.add_argument('name')\n",
                  "    parser.add_argument('name')\n"
                  "    parser.add_argument('--shout', action='store_true')\n")),
        step(edit("greet.py", "    print(message)",
                  "    print(message.upper() if args.shout else message)")),
        DONE],
    "fix-off-by-one": [
        read("pages.py"),
        step(edit("pages.py", "return items // per_page", "return -(-items // per_page)")),
        DONE],
    "implement-function": [
        read("text.py"),
        step(edit("text.py", "def slugify(text):\n    raise NotImplementedError\n",
                  "import re\n\n\ndef slugify(text):\n"
                  "    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n")),
        DONE],
    "fix-import": [
        read("app.py"), step(edit("app.py", "from helper import", "from helpers import")), DONE],
    "add-config-key": [
        read("config.json"),
        step(edit("config.json", '"retries": 3\n', '"retries": 3,\n  "timeout": 30\n')),
        DONE],
    "fix-typo": [
        read("messages.py"), step(edit("messages.py", "'Welcom to", "'Welcome to")), DONE],
    "extract-constant": [
        read("shop.py"),
        step(ToolCall("Write", {"file_path": "shop.py", "content": (
            "TAX_RATE = 0.2\n\n\ndef tax(amount):\n    return amount * TAX_RATE\n\n\n"
            "def total(amount):\n    return amount + amount * TAX_RATE\n")})),
        DONE],
    "handle-empty-input": [
        read("stats.py"),
        step(edit("stats.py", "    return sum(values) / len(values)",
                  "    if not values:\n        return 0.0\n    return sum(values) / len(values)")),
        DONE],
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


class ScriptedModel:
    """Answers each request with the next step of its task's solution.

    `skip` names tasks this "model" cannot solve: it just says it is done.
    """

    def __init__(self, skip: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.by_prompt = {t.prompt: t.name for t in load_tasks()}
        self.skip = set(skip)

    def __call__(self, request: RecordedRequest) -> Turn:
        messages = request.body["messages"]
        first = _text(messages[0]["content"])
        name = next((n for p, n in self.by_prompt.items() if first.startswith(p)), None)
        if name is None:
            raise AssertionError(f"no task for prompt {first[:80]!r}")
        if name in self.skip:
            return Turn(text="I could not do this.", usage=(100, 5))
        answered = sum(1 for m in messages if m["role"] == "assistant")
        script = SOLUTIONS[name]
        return script[min(answered, len(script) - 1)]

    def turns(self, count: int) -> list[Turn]:
        """Enough respond-turns for `count` requests (the server pops one per request)."""
        return [Turn(respond=self) for _ in range(count)]
