"""First run in the line mode: no provider is configured, so ask for one and its key.

The TUI's setup screen, as two questions: which provider (a number), then the key (typed
hidden). The key is saved through the session layer's `save_credential` (under
`$AISTACK_HOME`, mode 0600), where the next start finds it too. Ctrl+C or Ctrl+D, or an
empty answer, gives up: the caller then exits 2 naming the variables to set.
"""

from __future__ import annotations

from prompt_toolkit import PromptSession
from rich.text import Text

from aistack_tui.linemode.render import LineRenderer
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.session.config import KEY_PROVIDERS, RunConfig, save_credential


async def ask_provider_key(config: RunConfig, io: LineIO, renderer: LineRenderer) -> bool:
    """Ask for a provider and its key and save them; False when the user gave up."""
    lines = Text("No LLM provider is configured. Pick one and paste its API key; it is "
                 f"saved to {config.home / 'credentials.json'} (readable only by you).\n")
    for number, (_, label, variable) in enumerate(KEY_PROVIDERS, 1):
        lines.append(f"  {number}. {label}", style="bold")
        lines.append(f"  (or set {variable})\n", style="dim")
    lines.append("A local model needs no key: quit and start with --model ollama/MODEL.",
                 style="dim")
    renderer.print(lines)
    try:
        provider = await _choose(io, renderer)
        if provider is None:
            return False
        key = await _line(io, "API key: ", secret=True)
    except (KeyboardInterrupt, EOFError):
        return False
    if not key.strip():
        return False
    path = save_credential(config.home, provider, key.strip())
    renderer.notice(f"saved the {provider} key to {path}")
    return True


async def _choose(io: LineIO, renderer: LineRenderer) -> str | None:
    while True:
        answer = (await _line(io, f"provider [1-{len(KEY_PROVIDERS)}]: ")).strip().lower()
        if not answer:
            return None
        names = [name for name, _, _ in KEY_PROVIDERS]
        if answer in names:
            return answer
        if answer.isdigit() and 0 < int(answer) <= len(KEY_PROVIDERS):
            return KEY_PROVIDERS[int(answer) - 1][0]
        renderer.notice(f"answer a number from 1 to {len(KEY_PROVIDERS)}", "warning")


async def _line(io: LineIO, message: str, *, secret: bool = False) -> str:
    session: PromptSession[str] = PromptSession(input=io.input, output=io.output)
    return await session.prompt_async(message, is_password=secret)
