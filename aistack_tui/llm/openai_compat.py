"""OpenAI-compatible vendors: the OpenAI adapter with each vendor's defaults.

ollama, vLLM and LM Studio run locally and ignore the key (the SDK still insists on one,
so a placeholder is passed); DeepSeek and OpenRouter are hosted and need theirs. Custom
endpoints declared in settings (`providers: {NAME: {type: "openai-compatible", ...}}`)
use the same class.
"""

from __future__ import annotations

from dataclasses import dataclass

from aistack_tui.llm._shared import DEFAULT_TIMEOUT
from aistack_tui.llm.lean_http import Transport
from aistack_tui.llm.openai import OpenAIProvider

PLACEHOLDER_KEY = "not-needed"
"""Sent to servers that need no key: the SDK refuses to build a client without one."""


@dataclass(frozen=True, slots=True)
class Vendor:
    base_url: str
    key_env_vars: tuple[str, ...]
    needs_key: bool


VENDORS: dict[str, Vendor] = {
    "ollama": Vendor("http://localhost:11434/v1", ("OLLAMA_API_KEY",), needs_key=False),
    "deepseek": Vendor("https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",), needs_key=True),
    "openrouter": Vendor(
        "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), needs_key=True
    ),
    "vllm": Vendor("http://localhost:8000/v1", ("VLLM_API_KEY",), needs_key=False),
    "lmstudio": Vendor("http://localhost:1234/v1", ("LMSTUDIO_API_KEY",), needs_key=False),
}


class OpenAICompatProvider(OpenAIProvider):
    """A model behind an OpenAI-compatible Chat Completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        name: str = "openai-compatible",
        timeout: float = DEFAULT_TIMEOUT,
        transport: Transport | None = None,
    ) -> None:
        vendor = VENDORS.get(name)
        if base_url is None:
            if vendor is None:
                raise ValueError(f"provider {name!r} needs a base_url")
            base_url = vendor.base_url
        super().__init__(
            model,
            api_key=api_key or PLACEHOLDER_KEY,
            base_url=base_url,
            name=name,
            timeout=timeout,
            # `max_completion_tokens` is OpenAI's newer name; ollama, vLLM, LM Studio
            # and DeepSeek all understand the older `max_tokens`.
            max_tokens_field="max_tokens",
            transport=transport,
        )
