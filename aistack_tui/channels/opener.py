"""How the bus opens sessions in the program: through the session facade only.

A channel's session is opened like the TUI's (`interactive=True`: notices are kept for
the first turn) but with no trust dialog, so whatever a project's files ask for that the
user has not agreed to before stays out, as in print mode.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from aistack_tui.agent.ports import ApprovalHandler
from aistack_tui.channels.bus import ChannelSession
from aistack_tui.channels.messages import OpenRequest


class FacadeOpener:
    """`bootstrap.open_session` for a channel's `OpenRequest`."""

    def __init__(self, env: Mapping[str, str] | None = None, **options: Any) -> None:
        self.env = dict(os.environ if env is None else env)
        self.options = options
        """Run options every session gets (`allowed_tools`, `max_turns`, ...)."""

    async def __call__(self, request: OpenRequest, approver: ApprovalHandler
                       ) -> ChannelSession:
        from aistack_tui.bootstrap import open_session
        from aistack_tui.session.config import make_run_config

        options = dict(self.options)
        if request.additional_directories:
            options["add_dirs"] = [*options.get("add_dirs", []),
                                   *request.additional_directories]
        if request.mcp_servers:
            options["client_mcp_servers"] = dict(request.mcp_servers)
        config = make_run_config(
            cwd=request.cwd, env=self.env, model=request.model,
            permission_mode=request.mode, resume=request.resume, **options)
        session = await open_session(config, approver, interactive=True)
        if request.mcp_servers:
            # The channel asked for these servers: their tools are there from its first
            # prompt on, as in print mode (bounded: one that hangs is reported, skipped).
            try:
                await session.wait_for_mcp(config.loaded.settings.mcp_connect_timeout)
            except BaseException:
                await session.close()
                raise
        return session
