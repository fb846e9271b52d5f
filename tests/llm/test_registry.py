"""Model strings, provider configuration from env and settings, and lazy adapters."""

from __future__ import annotations

import subprocess
import sys

import pytest

from aistack_tui.llm.provider import Provider
from aistack_tui.llm.registry import (
    KNOWN_PROVIDERS,
    InvalidModelStringError,
    MissingAPIKeyError,
    UnknownProviderError,
    create_provider,
    default_provider_from_env,
    parse_model_string,
    resolve_provider_config,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("openai/gpt-4.1", ("openai", "gpt-4.1")),
        ("google/gemini-2.5-pro", ("google", "gemini-2.5-pro")),
        ("gemini/gemini-2.5-pro", ("google", "gemini-2.5-pro")),
        ("ollama/qwen2.5-coder:7b", ("ollama", "qwen2.5-coder:7b")),
        ("openrouter/meta-llama/llama-3.3-70b-instruct",
         ("openrouter", "meta-llama/llama-3.3-70b-instruct")),
        ("Anthropic/claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
        ("mycorp/internal-model", ("mycorp", "internal-model")),
        ("claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("gpt-4o", ("openai", "gpt-4o")),
        ("gemini-2.5-flash", ("google", "gemini-2.5-flash")),
    ],
)
def test_parse_model_string(value: str, expected: tuple[str, str]) -> None:
    assert parse_model_string(value) == expected


@pytest.mark.parametrize("value", ["", "  ", "anthropic/", "/gpt-4.1", "mystery-model"])
def test_bad_model_strings_get_a_clear_error(value: str) -> None:
    with pytest.raises(InvalidModelStringError, match="PROVIDER/MODEL"):
        parse_model_string(value)


def test_unknown_provider_error_lists_known_providers() -> None:
    with pytest.raises(UnknownProviderError) as info:
        resolve_provider_config("acme", {"mycorp": {"base_url": "http://x/v1"}}, {}, {})
    message = str(info.value)
    for name in (*KNOWN_PROVIDERS, "mycorp"):
        assert name in message
    assert info.value.name == "acme"


def test_keys_and_base_urls_come_from_the_environment() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
           "GOOGLE_API_KEY": "g-key", "DEEPSEEK_API_KEY": "ds"}
    anthropic = resolve_provider_config("anthropic", {}, {}, env)
    assert (anthropic.kind, anthropic.api_key, anthropic.base_url) == (
        "anthropic", "sk-ant", "http://127.0.0.1:1")
    google = resolve_provider_config("gemini", {}, {}, env)
    assert (google.name, google.kind, google.api_key) == ("google", "google", "g-key")
    deepseek = resolve_provider_config("deepseek", {}, {}, env)
    assert deepseek.base_url == "https://api.deepseek.com/v1"
    assert deepseek.api_key == "ds"
    assert deepseek.needs_key
    ollama = resolve_provider_config("ollama", {}, {}, {})
    assert (ollama.base_url, ollama.needs_key, ollama.api_key) == (
        "http://localhost:11434/v1", False, None)


def test_gemini_key_wins_over_google_key() -> None:
    env = {"GEMINI_API_KEY": "gem", "GOOGLE_API_KEY": "goo"}
    assert resolve_provider_config("google", env=env).api_key == "gem"


def test_settings_supply_keys_and_base_urls_the_environment_lacks() -> None:
    overrides = {"openai": {"api_key": "from-settings", "base_url": "http://proxy/v1"},
                 "lmstudio": {"base_url": "http://gpu-box:1234/v1"}}
    openai = resolve_provider_config("openai", {}, overrides, {})
    assert (openai.api_key, openai.base_url) == ("from-settings", "http://proxy/v1")
    env_wins = resolve_provider_config("openai", {}, overrides, {"OPENAI_API_KEY": "env"})
    assert env_wins.api_key == "env"
    assert resolve_provider_config("lmstudio", {}, overrides, {}).base_url == (
        "http://gpu-box:1234/v1")


def test_custom_openai_compatible_provider_from_settings() -> None:
    custom = {"corp": {"type": "openai-compatible", "base_url": "https://llm.corp/v1",
                       "api_key_env": "CORP_KEY"}}
    config = resolve_provider_config("corp", custom, {}, {"CORP_KEY": "secret"})
    assert config.kind == "openai-compatible"
    assert config.base_url == "https://llm.corp/v1"
    assert config.api_key == "secret"
    assert config.key_env_vars == ("CORP_KEY",)
    assert config.needs_key
    assert "secret" not in repr(config)


def test_custom_provider_needs_a_base_url_and_a_known_type() -> None:
    with pytest.raises(ValueError, match="base_url"):
        resolve_provider_config("corp", {"corp": {"type": "openai-compatible"}}, {}, {})
    with pytest.raises(ValueError, match=r"providers\.corp\.type"):
        resolve_provider_config("corp", {"corp": {"type": "soap", "base_url": "x"}}, {}, {})


def test_missing_key_is_an_auth_error_naming_the_variables() -> None:
    config = resolve_provider_config("google", {}, {}, {})
    with pytest.raises(MissingAPIKeyError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        create_provider(config, "gemini-2.5-pro")


@pytest.mark.parametrize(
    ("name", "class_name"),
    [
        ("anthropic", "AnthropicProvider"),
        ("openai", "OpenAIProvider"),
        ("google", "GoogleProvider"),
        ("ollama", "OpenAICompatProvider"),
        ("vllm", "OpenAICompatProvider"),
    ],
)
async def test_create_provider_builds_the_adapter(name: str, class_name: str) -> None:
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "GEMINI_API_KEY": "g"}
    provider = create_provider(resolve_provider_config(name, env=env), "some-model")
    try:
        assert type(provider).__name__ == class_name
        assert isinstance(provider, Provider)
        assert (provider.name, provider.model) == (name, "some-model")
    finally:
        await provider.aclose()


def test_default_provider_is_the_first_with_a_key() -> None:
    assert default_provider_from_env({}) is None
    assert default_provider_from_env({"GOOGLE_API_KEY": "x"}) == "google"
    assert default_provider_from_env({"GOOGLE_API_KEY": "x", "OPENAI_API_KEY": "y"}) == "openai"
    assert default_provider_from_env({"OPENAI_API_KEY": "y", "ANTHROPIC_API_KEY": "z"}) == (
        "anthropic")
    assert default_provider_from_env({"ANTHROPIC_API_KEY": "  "}) is None
    assert default_provider_from_env({"DEEPSEEK_API_KEY": "d"}) is None


def test_registry_imports_no_sdk() -> None:
    code = (
        "import sys; import aistack_tui.llm.registry, aistack_tui.llm.retry, "
        "aistack_tui.llm.model_info, aistack_tui.llm.tokens, aistack_tui.llm.json_repair; "
        "bad = [m for m in ('anthropic', 'openai', 'google.genai') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
