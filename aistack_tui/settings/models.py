"""The settings schema: what each key means and which values are valid.

Unknown top-level keys are kept (later features and other tools' keys must not break a
file) but known keys are validated strictly: a security setting with a typo must fail
loudly, never be ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveInt, SecretStr

from aistack_tui.permissions.types import PermissionMode

_M = TypeVar("_M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ProviderSettings(_Strict):
    type: Literal["anthropic", "openai", "google", "openai-compatible"] = "openai-compatible"
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: SecretStr | None = None


class ModelOverride(_Strict):
    """What settings say about one `provider/model`, over what the catalogue knows: a
    limit of the wrong type must fail here, since a silently ignored one misleads budgeting."""

    model_config = ConfigDict(strict=True)
    context_window: PositiveInt | None = None
    """Null (like unset) keeps what the catalogue knows."""
    max_output_tokens: PositiveInt | None = None
    input_price: NonNegativeFloat | None = None
    """USD per million tokens; null makes the price unknown."""
    output_price: NonNegativeFloat | None = None
    cache_read_price: NonNegativeFloat | None = None
    cache_write_price: NonNegativeFloat | None = None


class PermissionSettings(_Strict):
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    default_mode: PermissionMode = Field("default", alias="defaultMode")
    additional_directories: list[str] = Field(
        default_factory=list, alias="additionalDirectories"
    )
    tests: list[dict[str, Any]] = Field(default_factory=list)


Backoff = Literal["fixed", "linear", "exponential", "fibonacci"]


class RetrySettings(_Strict):
    max_retries: int = Field(5, ge=0, le=20)
    base_delay: float = Field(1.0, ge=0)
    max_delay: float = Field(30.0, ge=0)
    strategy: Backoff = "exponential"
    per_error: dict[
        Literal[
            "RateLimitError",
            "OverloadedError",
            "ServerError",
            "ProviderConnectionError",
            "ProviderTimeoutError",
        ],
        Backoff,
    ] = Field(default_factory=dict, alias="perError")
    breaker_threshold: int = Field(5, alias="breakerThreshold", ge=1)
    """Consecutive failed attempts after which the fallback model takes over."""


class LimitSettings(_Strict):
    """Hard stops (tokens, cost, wall time) and soft ones (tool failures) per run."""

    max_tokens: int | None = Field(None, alias="maxTokens", ge=1)
    max_budget_usd: float | None = Field(None, alias="maxBudgetUsd", gt=0)
    max_wall_seconds: float | None = Field(None, alias="maxWallSeconds", gt=0)
    max_consecutive_tool_failures: int | None = Field(
        8, alias="maxConsecutiveToolFailures", ge=1
    )


class RouterSettings(_Strict):
    """Which model does which kind of work, so cheap models do cheap work."""

    compaction: str | None = None
    subagent: str | None = None
    title: str | None = None


class CompactionSettingsModel(_Strict):
    warn_ratio: float = Field(0.6, alias="warnRatio", gt=0, lt=1)
    auto_ratio: float = Field(0.8, alias="autoRatio", gt=0, lt=1)


class TelegramSettings(_Strict):
    """The Telegram gateway (`aistack gateway telegram`). Only the user's own settings
    file counts for it: a project's files never decide who may drive the agent."""

    allowed_user_ids: list[int] = Field(default_factory=list, alias="allowedUserIds")
    """Telegram user ids the bot serves; empty means nobody."""
    project_dir: str | None = Field(None, alias="projectDir")
    """Where the chats' sessions work (default: the directory the gateway starts in)."""
    edit_interval: float = Field(1.0, alias="editInterval", ge=0.05, le=60)
    """Seconds between two message changes in a chat while an answer streams."""
    base_url: str | None = Field(None, alias="baseUrl")
    """A self-hosted Bot API server, e.g. `http://localhost:8081/bot`."""


def _defaults(model: type[_M]) -> Callable[[], _M]:
    """A default factory pyright accepts for models whose fields have aliases."""
    return lambda: model.model_validate({})


class Settings(BaseModel):
    """Merged settings of every layer (see `settings.layers`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    model: str | None = None
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    models: dict[str, ModelOverride] = Field(default_factory=dict)
    permissions: PermissionSettings = Field(default_factory=_defaults(PermissionSettings))
    retry: RetrySettings = Field(default_factory=_defaults(RetrySettings))
    max_turns: int | None = Field(None, alias="maxTurns", ge=1)
    system_prompt: str | None = Field(None, alias="systemPrompt")
    append_system_prompt: str | None = Field(None, alias="appendSystemPrompt")
    context_budget: float = Field(0.15, alias="contextBudget", gt=0, le=0.9)
    memory_enabled: bool = Field(True, alias="memory")
    knowledge_enabled: bool = Field(True, alias="knowledge")
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict, alias="mcpServers")
    hooks: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for the session, its tools and hooks (Claude Code's `env`)."""
    api_keys: dict[str, SecretStr] = Field(default_factory=dict, alias="apiKeys")
    mcp_connect_timeout: float = Field(10.0, alias="mcpConnectTimeout", gt=0)
    compaction: CompactionSettingsModel = Field(default_factory=_defaults(CompactionSettingsModel))
    sandbox: Literal["off", "auto", "bwrap"] = "auto"
    sandbox_network: bool = Field(False, alias="sandboxNetwork")
    checkpoints: bool = True
    notifications: Literal["auto", "bell", "osc", "off"] = "auto"
    """How the TUI tells you a turn ended or needs approval while you look elsewhere."""
    limits: LimitSettings = Field(default_factory=_defaults(LimitSettings))
    fallback_model: str | None = Field(None, alias="fallbackModel")
    router: RouterSettings = Field(default_factory=_defaults(RouterSettings))
    telegram: TelegramSettings = Field(default_factory=_defaults(TelegramSettings))

    def model_overrides(self) -> dict[str, dict[str, Any]]:
        """`models` as the catalogue takes them: only what each entry sets."""
        return {k: v.model_dump(exclude_unset=True) for k, v in self.models.items()}
