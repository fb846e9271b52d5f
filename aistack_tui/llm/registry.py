"""Provider names → configuration → adapter, without importing any SDK until asked.

`aistack --version` must not pay for `anthropic` (~1.5 s), `openai` or `google.genai`,
so adapters are named here by import path and loaded only in `create_provider`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from aistack_tui.llm.errors import AuthError
from aistack_tui.llm.provider import Provider

ProviderKind: TypeAlias = Literal["anthropic", "openai", "google", "openai-compatible"]


@dataclass(frozen=True, slots=True)
class _BuiltIn:
    kind: ProviderKind
    key_env_vars: tuple[str, ...]
    base_url_env: str | None
    default_base_url: str | None
    needs_key: bool


# Keep the vendor URLs in sync with openai_compat.VENDORS (not imported: it pulls in openai).
KNOWN_PROVIDERS: dict[str, _BuiltIn] = {
    "anthropic": _BuiltIn("anthropic", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", None, True),
    "openai": _BuiltIn("openai", ("OPENAI_API_KEY",), "OPENAI_BASE_URL", None, True),
    "google": _BuiltIn(
        "google", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GOOGLE_GEMINI_BASE_URL", None, True
    ),
    "ollama": _BuiltIn(
        "openai-compatible", ("OLLAMA_API_KEY",), None, "http://localhost:11434/v1", False
    ),
    "deepseek": _BuiltIn(
        "openai-compatible", ("DEEPSEEK_API_KEY",), None, "https://api.deepseek.com/v1", True
    ),
    "openrouter": _BuiltIn(
        "openai-compatible", ("OPENROUTER_API_KEY",), None, "https://openrouter.ai/api/v1", True
    ),
    "vllm": _BuiltIn(
        "openai-compatible", ("VLLM_API_KEY",), None, "http://localhost:8000/v1", False
    ),
    "lmstudio": _BuiltIn(
        "openai-compatible", ("LMSTUDIO_API_KEY",), None, "http://localhost:1234/v1", False
    ),
}
ALIASES: dict[str, str] = {"gemini": "google"}
DEFAULT_ORDER = ("anthropic", "openai", "google")
"""Providers tried, in this order, when no model is configured (docs/providers.md)."""

_ADAPTERS: dict[ProviderKind, str] = {
    "anthropic": "aistack_tui.llm.anthropic:AnthropicProvider",
    "openai": "aistack_tui.llm.openai:OpenAIProvider",
    "google": "aistack_tui.llm.google:GoogleProvider",
    "openai-compatible": "aistack_tui.llm.openai_compat:OpenAICompatProvider",
}
_PREFIX_GUESSES = (
    ("claude", "anthropic"),
    ("gpt-", "openai"),
    ("chatgpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("gemini", "google"),
    ("deepseek", "deepseek"),
)


class UnknownProviderError(ValueError):
    """A model string or setting names a provider that is neither built in nor declared."""

    def __init__(self, name: str, known: list[str] | tuple[str, ...]) -> None:
        self.name = name
        self.known = list(known)
        super().__init__(
            f"unknown provider {name!r}; known providers: {', '.join(self.known)} "
            "(declare others under `providers` in settings)"
        )


class InvalidModelStringError(ValueError):
    """A `--model` value that is not `provider/model`."""


class MissingAPIKeyError(AuthError):
    """The provider needs a key and none was found in the environment or settings."""


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Everything needed to build one provider's client."""

    name: str
    kind: ProviderKind
    api_key: str | None
    base_url: str | None
    key_env_vars: tuple[str, ...]
    needs_key: bool

    def __repr__(self) -> str:  # never print a key
        key = "set" if self.api_key else None
        return (
            f"ProviderConfig(name={self.name!r}, kind={self.kind!r}, api_key={key!r}, "
            f"base_url={self.base_url!r}, needs_key={self.needs_key})"
        )


def canonical_name(name: str) -> str:
    """Built-in names are case-insensitive and `gemini` means `google`; custom names
    are kept as written."""
    lowered = ALIASES.get(name.lower(), name.lower())
    return lowered if lowered in KNOWN_PROVIDERS else name


def parse_model_string(value: str) -> tuple[str, str]:
    """`"anthropic/claude-sonnet-4-6"` → `("anthropic", "claude-sonnet-4-6")`.

    Only the first slash separates: `openrouter/meta-llama/llama-3.3-70b` keeps the
    vendor's slashes in the model. A bare well-known model name (`claude-…`, `gpt-…`,
    `gemini-…`) gets its provider inferred, since that is what users type.
    """
    text = value.strip()
    if not text:
        raise InvalidModelStringError("empty model string; expected PROVIDER/MODEL")
    provider, sep, model = text.partition("/")
    if not sep:
        lowered = text.lower()
        for prefix, guess in _PREFIX_GUESSES:
            if lowered.startswith(prefix):
                return guess, text
        raise InvalidModelStringError(
            f"model {text!r} has no provider; write PROVIDER/MODEL, e.g. anthropic/{text}"
        )
    if not provider or not model.strip("/"):
        raise InvalidModelStringError(
            f"invalid model string {text!r}; expected PROVIDER/MODEL, e.g. openai/gpt-4.1"
        )
    return canonical_name(provider), model


def known_provider_names(custom_providers: Mapping[str, Any] | None = None) -> list[str]:
    names = list(KNOWN_PROVIDERS)
    names.extend(n for n in (custom_providers or {}) if n not in KNOWN_PROVIDERS)
    return names


def _get(obj: object, key: str) -> Any:
    """A field of a settings entry, whether it is a dict or a pydantic model."""
    if isinstance(obj, Mapping):
        value = cast("Mapping[str, Any]", obj).get(key)
    else:
        value = getattr(obj, key, None)
    if value is not None and hasattr(value, "get_secret_value"):
        value = value.get_secret_value()  # pydantic SecretStr
    return value


def _env_value(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def resolve_provider_config(
    name: str,
    custom_providers: Mapping[str, Any] | None = None,
    provider_overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProviderConfig:
    """Resolve a provider name into its configuration.

    - `custom_providers`: settings `providers: {NAME: {type, base_url, api_key_env}}`
      declaring endpoints that are not built in (`type` defaults to openai-compatible);
    - `provider_overrides`: per-provider settings `{NAME: {api_key, base_url,
      api_key_env}}` over built-in or custom ones;
    - `env`: the environment. Keys and base URLs from the environment win over
      settings, which win over built-in defaults, as in the settings layering (§4).
    """
    env = env if env is not None else {}
    custom_providers = custom_providers or {}
    provider_overrides = provider_overrides or {}
    name = canonical_name(name)
    override = _as_dict(provider_overrides.get(name))

    builtin = KNOWN_PROVIDERS.get(name)
    custom = custom_providers.get(name)
    if builtin is None and custom is None:
        raise UnknownProviderError(name, known_provider_names(custom_providers))

    kind: ProviderKind
    if custom is not None and builtin is None:
        kind_value = _get(custom, "type") or "openai-compatible"
        if kind_value not in _ADAPTERS:
            raise ValueError(
                f"providers.{name}.type: {kind_value!r} is not one of {', '.join(_ADAPTERS)}"
            )
        kind = kind_value
        key_env = _get(custom, "api_key_env")
        key_env_vars: tuple[str, ...] = (key_env,) if key_env else ()
        base_url = _get(custom, "base_url")
        needs_key = bool(key_env or _get(custom, "api_key"))
        default_key = _get(custom, "api_key")
        if not base_url and kind == "openai-compatible":
            raise ValueError(f"providers.{name}.base_url is required for an openai-compatible "
                             "provider")
        base_url_env = None
    else:
        assert builtin is not None
        kind = builtin.kind
        key_env_vars = builtin.key_env_vars
        base_url = builtin.default_base_url
        needs_key = builtin.needs_key
        default_key = None
        base_url_env = builtin.base_url_env
        if custom is not None:  # a `providers` entry may also adjust a built-in one
            override = {**_as_dict(custom), **_as_dict(override)}

    extra_env = _get(override, "api_key_env")
    if extra_env:
        key_env_vars = (extra_env, *key_env_vars)
    api_key = _env_value(env, key_env_vars) or _get(override, "api_key") or default_key
    base_url = (
        (_env_value(env, (base_url_env,)) if base_url_env else None)
        or _get(override, "base_url")
        or base_url
    )
    return ProviderConfig(
        name=name,
        kind=kind,
        api_key=api_key,
        base_url=base_url,
        key_env_vars=key_env_vars,
        needs_key=needs_key,
    )


def _as_dict(obj: object) -> dict[str, Any]:
    """A settings entry (dict, pydantic model or None) as a dict of its set fields."""
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return dict(cast("Mapping[str, Any]", obj))
    return {k: _get(obj, k) for k in ("api_key", "base_url", "api_key_env") if _get(obj, k)}


def create_provider(config: ProviderConfig, model: str, **options: Any) -> Provider:
    """Build the adapter for `config`, importing its SDK now (and only now).

    `options` go to the adapter's constructor (`timeout`, and `thinking_budget` for
    Anthropic). Raises `MissingAPIKeyError` naming the variables to set.
    """
    if config.needs_key and not config.api_key:
        where = " or ".join(config.key_env_vars) or f"providers.{config.name}.api_key"
        raise MissingAPIKeyError(f"no API key for {config.name}: set {where}", provider=config.name)
    module_name, _, class_name = _ADAPTERS[config.kind].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    provider: Provider = cls(
        model, api_key=config.api_key, base_url=config.base_url, name=config.name, **options
    )
    return provider


def default_provider_from_env(env: Mapping[str, str]) -> str | None:
    """The first of anthropic, openai, google whose key is set."""
    for name in DEFAULT_ORDER:
        if _env_value(env, KNOWN_PROVIDERS[name].key_env_vars):
            return name
    return None
