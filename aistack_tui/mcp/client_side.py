"""What aistack answers when a server asks the client: roots, elicitation, log messages.

The capabilities sent in the handshake are exactly what works here: `roots` (the project
and the session's added directories, with `listChanged`: `/add-dir` adds one and the
servers are told) and `elicitation.form` (a form the front end fills in, or declines where
nobody can answer). URL elicitation and sampling are not offered: a server that needs
them sees they are missing instead of getting an answer that never comes. Log messages
from the server go to its log file, and to the front end in `--verbose` sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.mcp.elicitation import (
    ElicitationHandler,
    ElicitationRequest,
    form_fields,
)

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientRequestContext

ElicitationSource = Callable[[], ElicitationHandler]
LogSink = Callable[[str, str], None]
"""(level, text) of one log message a server sent."""


class ClientCallbacks:
    """The callbacks of one server's session.

    `declined` collects the reasons requests were declined since the last `take_declined`,
    so the tool call that caused them can tell the model.
    """

    def __init__(
        self,
        server: str,
        roots: Callable[[], list[Path]],
        elicitation: ElicitationSource,
        log: LogSink,
        *,
        note: Callable[[str], None] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.server = server
        self._roots = roots
        self._elicitation = elicitation
        self._log = log
        self._note = note
        """A line of ours for the server's log file (not shown as if the server said it)."""
        self._warn = warn
        """What the user should hear about in any case (a request declined unanswered)."""
        self.declined: list[str] = []
        self.asking = 0
        """Forms open right now: a call's timeout does not run while the user answers."""

    def take_declined(self) -> list[str]:
        notes, self.declined = self.declined, []
        return notes

    async def list_roots(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        import mcp_types

        roots: list[mcp_types.Root] = []
        for path in self._roots():
            roots.append(mcp_types.Root(uri=path.resolve().as_uri(), name=path.name or str(path)))  # type: ignore[arg-type]
        return mcp_types.ListRootsResult(roots=roots)

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        import mcp_types

        if not isinstance(params, mcp_types.ElicitRequestFormParams):
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message="aistack supports form elicitation only (not URL mode)",
            )
        schema: dict[str, Any] = dict(params.requested_schema)
        request = ElicitationRequest(
            server=self.server, message=params.message, fields=form_fields(schema),
            schema=schema,
        )
        self.asking += 1  # the call that caused it waits for the user, not for a hang
        try:
            answer = await self._elicitation().elicit(request)
        finally:
            self.asking -= 1
        if answer.action != "accept" and answer.reason:
            note = (f"MCP server '{self.server}' asked for input ({params.message!r}); "
                    f"{answer.reason}")
            self.declined.append(note)
            if self._warn is not None:
                self._warn(note)
        if self._note is not None:
            self._note(f"elicitation {params.message!r}: {answer.action}"
                       + (f" ({answer.reason})" if answer.reason else ""))
        content = answer.content if answer.action == "accept" else None
        return mcp_types.ElicitResult(action=answer.action, content=content)

    async def on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        data = params.data
        text = data if isinstance(data, str) else repr(data)
        source = f"{params.logger}: " if params.logger else ""
        self._log(params.level, f"{source}{text}")
