"""What the fake LLM server answers on the three models endpoints.

The answers have the exact wire shape of the real endpoints as the installed SDKs parse
them (Anthropic `GET /v1/models` pages of `ModelInfo` with capabilities, lifecycle and
retirement dates; OpenAI `GET /v1/models` with `shutdown_date`; Gemini `models.list`
with token limits and supported methods), and their contents follow what the real
endpoints and genai-prices list today: current models, a few deprecated ones with the
dates their providers announce, and the speech, image and embedding models a real list
mixes in.
`fakes_tests/test_fake_models.py` checks every entry against the SDK types.
"""

from __future__ import annotations

import copy
from typing import Any

_SUPPORTED = {"supported": True}
_UNSUPPORTED = {"supported": False}


def _capabilities(thinking: bool = True, xhigh: bool = False) -> dict[str, Any]:
    effort = {"supported": True, "low": _SUPPORTED, "medium": _SUPPORTED, "high": _SUPPORTED,
              "max": _SUPPORTED, "xhigh": _SUPPORTED if xhigh else _UNSUPPORTED}
    return {
        "batch": _SUPPORTED,
        "citations": _SUPPORTED,
        "code_execution": _SUPPORTED,
        "context_management": {"supported": True, "clear_thinking_20251015": _SUPPORTED,
                               "clear_tool_uses_20250919": _SUPPORTED,
                               "compact_20260112": _SUPPORTED},
        "effort": effort,
        "image_input": _SUPPORTED,
        "pdf_input": _SUPPORTED,
        "server_tools": {"supported": True, "code_execution": _SUPPORTED,
                         "web_search": _SUPPORTED},
        "structured_outputs": _SUPPORTED,
        "thinking": {"supported": thinking, "types": {
            "adaptive": _SUPPORTED if thinking else _UNSUPPORTED,
            "between_tools": _SUPPORTED,
            "disabled": _SUPPORTED,
            "enabled": _SUPPORTED if thinking else _UNSUPPORTED,
        }},
    }


def _claude(model_id: str, name: str, line: str | None, created: str, window: int,
            max_tokens: int, *, deprecated: str | None = None,
            retires: str | None = None) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": name,
        "created_at": f"{created}T00:00:00Z",
        "lifecycle": "deprecated" if deprecated else "active",
        "deprecated_at": f"{deprecated}T00:00:00Z" if deprecated else None,
        "retires_at": f"{retires}T00:00:00Z" if retires else None,
        "line": line,
        "max_input_tokens": window,
        "max_tokens": max_tokens,
        "capabilities": _capabilities(xhigh=line in ("opus", "fable", "mythos")),
    }


ANTHROPIC_MODELS: list[dict[str, Any]] = [  # newest first, as the API lists them
    _claude("claude-fable-5-2", "Claude Fable 5.2", "fable", "2026-11-10", 1_000_000, 128_000),
    _claude("claude-mythos-5-2", "Claude Mythos 5.2", "mythos", "2026-11-10", 1_000_000,
            128_000),
    _claude("claude-haiku-5-5", "Claude Haiku 5.5", "haiku", "2026-10-28", 1_000_000, 64_000),
    _claude("claude-sonnet-5-5", "Claude Sonnet 5.5", "sonnet", "2026-10-28", 1_000_000,
            128_000),
    _claude("claude-opus-5-5", "Claude Opus 5.5", "opus", "2026-10-28", 1_000_000, 128_000),
    _claude("claude-opus-4-8", "Claude Opus 4.8", "opus", "2026-07-14", 1_000_000, 128_000),
    _claude("claude-opus-4-6", "Claude Opus 4.6", "opus", "2026-02-05", 1_000_000, 128_000),
    _claude("claude-sonnet-4-6", "Claude Sonnet 4.6", "sonnet", "2026-02-17", 1_000_000,
            64_000),
    _claude("claude-haiku-4-5-20251001", "Claude Haiku 4.5", "haiku", "2025-10-01", 200_000,
            64_000),
    _claude("claude-opus-4-5-20251101", "Claude Opus 4.5", "opus", "2025-11-24", 200_000,
            64_000, deprecated="2026-07-22", retires="2027-01-22"),
    _claude("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "sonnet", "2025-09-29",
            200_000, 64_000, deprecated="2026-05-30", retires="2026-11-30"),
]


def _oai(model_id: str, created: int, owner: str = "system",
         shutdown: str | None = None) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": owner,
            "shutdown_date": shutdown}


OPENAI_MODELS: list[dict[str, Any]] = [  # the API returns no particular order
    _oai("gpt-4o", 1715367049, shutdown="2027-01-14"),
    _oai("text-embedding-3-large", 1705953180),
    _oai("gpt-6.1-sol", 1789430400),
    _oai("whisper-1", 1677532384, "openai-internal"),
    _oai("gpt-6-astra", 1782864000),
    _oai("gpt-6.2-sol", 1793318400),
    _oai("gpt-6.1-terra", 1789430400),
    _oai("gpt-6-luna", 1782864000),
    _oai("tts-1", 1681940951, "openai-internal"),
    _oai("gpt-5.5", 1776902400),
    _oai("gpt-5.5-2026-04-23", 1776902400),
    _oai("gpt-5.4-mini", 1773705600),
    _oai("gpt-5.4-nano", 1773705600, shutdown="2027-04-01"),
    _oai("gpt-image-1", 1745517030),
    _oai("gpt-5", 1754425777, shutdown="2026-12-11"),
    _oai("gpt-4.1", 1744316542, shutdown="2027-01-14"),
    _oai("o3", 1744225308, shutdown="2026-12-11"),
    _oai("omni-moderation-latest", 1731689265),
    _oai("gpt-realtime", 1756271701),
    _oai("dall-e-3", 1698785189),
]

_GEMINI_CHAT = ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"]


def _gemini(name: str, display: str, version: str, window: int, output: int,
            methods: list[str] | None = None, *, thinking: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": f"models/{name}",
        "version": version,
        "displayName": display,
        "description": f"{display}.",
        "inputTokenLimit": window,
        "outputTokenLimit": output,
        "supportedGenerationMethods": methods if methods is not None else list(_GEMINI_CHAT),
        "temperature": 1,
        "topP": 0.95,
        "topK": 64,
        "maxTemperature": 2,
    }
    if thinking:
        entry["thinking"] = True
    return entry


GEMINI_MODELS: list[dict[str, Any]] = [
    _gemini("gemini-2.0-flash", "Gemini 2.0 Flash", "2.0", 1_048_576, 8_192, thinking=False),
    _gemini("gemini-2.5-flash", "Gemini 2.5 Flash", "001", 1_048_576, 65_536),
    _gemini("gemini-2.5-pro", "Gemini 2.5 Pro", "2.5", 1_048_576, 65_536),
    _gemini("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", "3.1-preview", 1_048_576,
            65_536),
    _gemini("gemini-3.5-flash-lite", "Gemini 3.5 Flash-Lite", "3.5", 1_048_576, 65_536),
    _gemini("gemini-3.8-flash", "Gemini 3.8 Flash", "3.8", 1_048_576, 65_536),
    _gemini("gemini-flash-latest", "Gemini Flash Latest", "3.8", 1_048_576, 65_536),
    _gemini("gemini-pro-latest", "Gemini Pro Latest", "3.1-preview", 1_048_576, 65_536),
    _gemini("gemini-4-argon", "Gemini 4 Argon", "4", 1_048_576, 131_072),
    _gemini("gemini-4-carbon", "Gemini 4 Carbon", "4", 2_097_152, 131_072),
    _gemini("gemini-3.8-flash-tts", "Gemini 3.8 Flash TTS", "3.8", 8_192, 16_384,
            ["generateContent", "countTokens"], thinking=False),
    _gemini("gemma-4-31b-it", "Gemma 4 31B IT", "001", 262_144, 32_768, thinking=False),
    _gemini("gemini-embedding-001", "Gemini Embedding 001", "001", 2_048, 1,
            ["embedContent", "countTextTokens", "countTokens", "asyncBatchEmbedContent"],
            thinking=False),
    _gemini("imagen-4.0-generate-001", "Imagen 4", "001", 480, 8_192, ["predict"],
            thinking=False),
]


def recorded_catalogues() -> dict[str, list[dict[str, Any]]]:
    """A fresh copy of every recorded answer, by wire format."""
    return copy.deepcopy({"anthropic": ANTHROPIC_MODELS, "openai": OPENAI_MODELS,
                          "google": GEMINI_MODELS})


def catalogues_from_ids(ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Minimal entries for bare model ids, in each format (for tests that only need
    some ids listed)."""
    return {
        "anthropic": [_claude(m, m, None, "2026-01-01", 200_000, 8_192) for m in ids],
        "openai": [_oai(m, 1700000000, "fake") for m in ids],
        "google": [_gemini(m, m, "001", 1_048_576, 8_192, thinking=False) for m in ids],
    }
