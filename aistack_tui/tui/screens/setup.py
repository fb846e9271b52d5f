"""First-run setup: no provider is configured, so pick one and paste a key, or use a
local Ollama / OpenAI-compatible server found on localhost.

The screen only gathers the choice; the app saves the key (under `$AISTACK_HOME`, mode
0600, through the composition root) and opens the session. Local servers are detected by
asking each well-known port for `/v1/models` with a short timeout.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from aistack_tui.session.config import KEY_PROVIDERS

if TYPE_CHECKING:
    import httpx

LOCAL_SERVERS: tuple[tuple[str, int], ...] = (("ollama", 11434), ("lmstudio", 1234), ("vllm", 8000))


@dataclass(frozen=True, slots=True)
class SetupChoice:
    """A provider with a pasted key, or a local server's model (`api_key` empty)."""

    provider: str
    api_key: str = ""
    model: str = ""


async def detect_local_servers(
    servers: tuple[tuple[str, int], ...] = LOCAL_SERVERS, host: str = "127.0.0.1",
    timeout: float = 0.6,
) -> list[tuple[str, str]]:
    """(provider, model) for every model served by a local OpenAI-compatible server."""
    import httpx  # deferred: ~0.1 s, before the first frame of every launch otherwise

    async def probe(client: httpx.AsyncClient, name: str, port: int) -> list[tuple[str, str]]:
        try:
            response = await client.get(f"http://{host}:{port}/v1/models")
            data = response.json().get("data", [])
        except (httpx.HTTPError, ValueError, AttributeError):
            return []
        return [(name, str(m["id"])) for m in data if isinstance(m, dict) and "id" in m]

    async with httpx.AsyncClient(timeout=timeout) as client:
        found = await asyncio.gather(*(probe(client, n, p) for n, p in servers))
    return [item for group in found for item in group]


class SetupScreen(Screen[SetupChoice]):
    """Shown instead of the conversation until a provider is configured."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back", show=False)]

    def __init__(
        self, message: str = "", servers: tuple[tuple[str, int], ...] = LOCAL_SERVERS
    ) -> None:
        super().__init__(classes="setup-screen")
        self.message = message
        self.servers = servers
        self.provider: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="setup"):
            yield Static(Text("Welcome to aistack", style="bold"), id="setup-title")
            yield Static(
                "No LLM provider is configured. Pick one and paste its API key (saved in "
                "$AISTACK_HOME/credentials.json, readable only by you), or choose a local "
                "server. Environment variables such as ANTHROPIC_API_KEY work too.",
                id="setup-help",
            )
            options = [Option(f"{label}  ({env})", id=name) for name, label, env in KEY_PROVIDERS]
            yield OptionList(*options, id="setup-providers")
            yield Static("Looking for local servers…", id="setup-local-status")
            yield OptionList(id="setup-local")
            yield Input(placeholder="Paste the API key and press Enter", password=True,
                        id="setup-key")
            yield Static(self.message, id="setup-message")

    def on_mount(self) -> None:
        self.query_one("#setup-key", Input).display = False
        self.query_one("#setup-local", OptionList).display = False
        self.query_one("#setup-providers", OptionList).focus()
        self.detect()

    @work(exclusive=True, group="setup-detect")
    async def detect(self) -> None:
        found = await detect_local_servers(self.servers) if self.servers else []
        status = self.query_one("#setup-local-status", Static)
        local = self.query_one("#setup-local", OptionList)
        if not found:
            status.update("No local Ollama / LM Studio / vLLM server found on localhost.")
            return
        status.update("Local models found:")
        local.add_options([Option(f"{p}/{m}", id=f"{p}/{m}") for p, m in found])
        local.display = True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        choice = event.option.id or ""
        if event.option_list.id == "setup-local":
            provider, _, model = choice.partition("/")
            self.dismiss(SetupChoice(provider, model=model))
            return
        self.provider = choice
        key = self.query_one("#setup-key", Input)
        key.display = True
        key.placeholder = f"Paste the {choice} API key and press Enter (Esc: back)"
        key.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if not value or self.provider is None:
            self.show_message("The key is empty: paste it and press Enter.")
            return
        self.dismiss(SetupChoice(self.provider, api_key=value))

    def show_message(self, message: str) -> None:
        self.query_one("#setup-message", Static).update(Text(message, style="bold red"))

    def action_back(self) -> None:
        key = self.query_one("#setup-key", Input)
        if key.display:
            key.value = ""
            key.display = False
            self.query_one("#setup-providers", OptionList).focus()
