"""The pickers the app opens over the conversation: sessions (`/resume`, `-r`) and models
(`/model`). Each runs as a worker of the app (`push_screen_wait` needs one) and acts on
the choice through the app, so `app.py` only starts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App

if TYPE_CHECKING:
    from aistack_tui.session.live import LiveSession
    from aistack_tui.tui.model_catalogue import ModelCatalogue
    from aistack_tui.tui.widgets.prompt_input import PromptInput

PICKER_PROMPTS = 30
"""The picker reads the messages of this many sessions, newest first, for their first
prompt (a long session costs a read of all of it)."""


class PickerHost(Protocol):
    @property
    def prompt(self) -> PromptInput: ...
    @property
    def catalogue(self) -> ModelCatalogue: ...
    @property
    def textual_app(self) -> App[Any]: ...

    def require_session(self) -> LiveSession: ...
    async def resume_session(self, session_id: str) -> None: ...
    async def switch_model(self, model_string: str) -> None: ...


async def pick_session(host: PickerHost) -> None:
    from aistack_tui.tui.screens.sessions import SessionPickerScreen  # after the first frame

    session = host.require_session()
    sessions = await session.list_sessions()
    prompts = await session.first_prompts([s.id for s in sessions[:PICKER_PROMPTS]])
    chosen = await host.textual_app.push_screen_wait(
        SessionPickerScreen(sessions, session.session_id, prompts))
    if chosen:
        await host.resume_session(chosen)
    host.prompt.focus()


async def pick_model(host: PickerHost) -> None:
    from aistack_tui.tui.screens.model_picker import ModelPickerScreen  # after the first frame

    session = host.require_session()
    app = host.textual_app
    # Open at once on the offline catalogue (built in the background after start);
    # the models endpoints' answer is merged when (if) it comes.
    models = host.catalogue.models
    picker = ModelPickerScreen(models or [], session.model, loading=models is None)
    answer = app.push_screen(picker, wait_for_dismiss=True)
    filling = app.run_worker(host.catalogue.fill(session, picker), group="picker-fill",
                             exit_on_error=False)
    chosen = await answer
    filling.cancel()
    if chosen and chosen != session.model:
        await host.switch_model(chosen)
    host.prompt.focus()
