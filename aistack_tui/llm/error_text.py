"""What a provider error means, as a sentence a person can read.

The error hierarchy (`llm/errors.py`) says what went wrong to code; a front end has to
say it to a person: "Anthropic is overloaded (529)", "Anthropic rejected the API key
(401)". These functions take the facts an event carries (the error's class name, the
provider, the HTTP status) so every front end words them alike; what to do next (a key
to press, a command) is the front end's to add.
"""

from __future__ import annotations

from aistack_tui.llm.registry import KNOWN_PROVIDERS

PROVIDER_NAMES = {
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "google": "Google Gemini",
    "gemini": "Google Gemini",
    "ollama": "Ollama",
    "deepseek": "DeepSeek",
    "openrouter": "OpenRouter",
    "vllm": "vLLM",
    "lmstudio": "LM Studio",
}

RETRYABLE_KINDS = frozenset({
    "OverloadedError", "RateLimitError", "ServerError", "ProviderTimeoutError",
    "ProviderConnectionError",
})


def provider_name(provider: str) -> str:
    """`anthropic` → `Anthropic`; an unknown (custom) provider keeps its own name."""
    return PROVIDER_NAMES.get(provider, provider or "the provider")


def what_happened(kind: str, provider: str, status_code: int | None, message: str = "") -> str:
    """One clause, present tense: `Anthropic is overloaded (529)`."""
    who = provider_name(provider)
    code = f" ({status_code})" if status_code else ""
    match kind:
        case "OverloadedError":
            return f"{who} is overloaded{code}"
        case "RateLimitError":
            return f"{who}'s rate limit was reached{code}"
        case "ServerError":
            return f"{who} had a server error{code}"
        case "ProviderTimeoutError":
            return f"{who} did not answer in time"
        case "ProviderConnectionError":
            return f"the connection to {who} failed" + (f" ({message})" if message else "")
        case "AuthError":
            return f"{who} rejected the API key{code}"
        case "BadRequestError":
            return f"{who} refused the request{code}" + (f": {message}" if message else "")
        case _:
            return message or f"{who} failed{code}"


def key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables that hold `provider`'s key (empty for a custom one)."""
    known = KNOWN_PROVIDERS.get(provider)
    return known.key_env_vars if known is not None else ()
