"""The line mode's answer to an MCP server's request for input (elicitation): a question
in the scrolling terminal, one line per field.

    ? MCP server everything asks: Please provide inputs for the following fields:
      fill it in? [y] yes  [n] decline  (Ctrl+C cancels)
    String * (Your full, legal name): Ada
    Integer (Your favorite integer) [42]:

Enter keeps a field's default (shown in brackets) or leaves an optional one empty; a
value the field does not accept is named and asked again (`FormField.parse`, the check
the TUI's dialog uses). Ctrl+C or Ctrl+D cancels the whole form. The question holds the
approver's lock, so it never interleaves with an approval question.
"""

from __future__ import annotations

from rich.text import Text

from aistack_tui.linemode.approval_prompt import NO, YES, LineApprover
from aistack_tui.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    FormField,
    FormValue,
)


def field_prompt(field: FormField) -> str:
    text = field.title + (" *" if field.required else "")
    if field.description:
        text += f" ({field.description})"
    if field.choices:
        text += " {" + ", ".join(f"{i}={lbl}" for i, (_, lbl) in enumerate(field.choices, 1))
        text += "; several, comma-separated}" if field.kind == "multi" else "}"
    elif field.kind == "boolean":
        text += " [y/n]"
    default = field.default
    if default is not None:
        shown = ", ".join(default) if isinstance(default, list) else str(default)
        text += f" [{shown}]"
    return text + ": "


class LineElicitation:
    """Asks a server's form in the terminal (an `ElicitationHandler`)."""

    def __init__(self, approver: LineApprover) -> None:
        self.approver = approver

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        approver = self.approver
        async with approver._lock:  # pyright: ignore[reportPrivateUsage]
            with approver.renderer.paused():
                title = Text("? ", style="bold yellow")
                title.append(f"MCP server {request.server} asks: ", style="bold")
                title.append(request.message)
                approver.renderer.print(title)
                try:
                    return await self._answer(request)
                except (KeyboardInterrupt, EOFError):
                    return ElicitationAnswer("cancel")

    async def _answer(self, request: ElicitationRequest) -> ElicitationAnswer:
        approver = self.approver
        while True:
            word = (await approver._line(  # pyright: ignore[reportPrivateUsage]
                "fill it in? [y] yes  [n] decline  (Ctrl+C cancels) ")).strip().lower()
            if word in YES:
                break
            if word in NO:
                return ElicitationAnswer("decline")
            approver.renderer.notice("answer y or n", "warning")
        content: dict[str, FormValue] = {}
        for field in request.fields:
            while True:
                text = await approver._line(field_prompt(field))  # pyright: ignore[reportPrivateUsage]
                try:
                    value = field.parse(text)
                except ValueError as e:
                    approver.renderer.notice(str(e), "warning")
                    continue
                if value is not None:
                    content[field.name] = value
                break
        return ElicitationAnswer("accept", content)
