"""`aistack models [PROVIDER…]`: the models each configured provider offers, with context
window, max output, price and deprecation.

Lists come from the providers' models endpoints (asked now when the cache under
`$AISTACK_HOME` is older than an hour, or with `--refresh`; never with `--offline`), else
a built-in list of current models; prices from genai-prices and settings `models`.
An untrusted project's `providers`, `apiKeys` and `env` are left out (`trust_gate`): a
models endpoint is asked with your key, so the project must not choose where it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from aistack_tui.llm.catalogue import CatalogueEntry, ProviderCatalogue
    from aistack_tui.llm.registry import ProviderConfig
    from aistack_tui.session.config import RunConfig

EXIT_USAGE = 2
_HEADER = ("MODEL", "CONTEXT", "MAX OUT", "$IN/M", "$OUT/M", "NOTES")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "models",
        help="list the models of each configured provider: context window, price, deprecation",
    )
    p.add_argument("providers", nargs="*", metavar="PROVIDER",
                   help="only these providers (default: every provider with a key or a "
                        "`providers` setting)")
    fetch = p.add_mutually_exclusive_group()
    fetch.add_argument("--refresh", action="store_true",
                       help="ask the models endpoints now, even if the cache is fresh")
    fetch.add_argument("--offline", action="store_true",
                       help="do not ask the endpoints: cached or built-in lists only")
    p.add_argument("--json", action="store_true", help="one JSON array of models")
    p.add_argument("--trust-project", action="store_true",
                   help="use this project's `providers` settings even if it is not trusted "
                        "yet (they choose where your keys are sent)")


def _select(args: argparse.Namespace, config: RunConfig) -> list[ProviderConfig] | str:
    """The providers to list, or what is wrong."""
    from aistack_tui.llm.registry import canonical_name, resolve_provider_config
    from aistack_tui.session.config import key_env
    from aistack_tui.session.providers import provider_configs, provider_settings

    custom = provider_settings(config)
    env = key_env(config)
    if not args.providers:
        configs = provider_configs(config, config.model)
        if not configs:
            return ("no provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
                    "GEMINI_API_KEY, or name one (`aistack models anthropic`)")
        return configs
    chosen: list[ProviderConfig] = []
    for name in args.providers:
        try:
            chosen.append(resolve_provider_config(canonical_name(name), custom, custom, env))
        except ValueError as e:
            return str(e)
    return chosen


def run(args: argparse.Namespace, config: RunConfig) -> int:
    from aistack_tui.llm.catalogue import provider_catalogue
    from aistack_tui.llm.models_endpoint import refresh

    selected = _select(args, config)
    if isinstance(selected, str):
        sys.stderr.write(f"aistack: {selected}\n")
        return EXIT_USAGE
    if not args.offline:
        errors = asyncio.run(refresh(selected, config.home, force=args.refresh))
        for name, error in errors.items():
            sys.stderr.write(f"aistack: {name} models endpoint: {error}; showing the "
                             "cached or built-in list\n")
    for provider in selected:
        if provider.needs_key and not provider.api_key and not args.offline:
            names = " or ".join(provider.key_env_vars) or "an api key in settings"
            sys.stderr.write(f"aistack: {provider.name} has no key ({names}): its endpoint "
                             "was not asked\n")
    overrides = config.loaded.settings.model_overrides()
    catalogues = [provider_catalogue(p.name, home=config.home, overrides=overrides)
                  for p in selected]
    current = config.model
    if args.json:
        rows = [_as_json(c, e, current) for c in catalogues for e in c.entries]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        for i, catalogue in enumerate(catalogues):
            if i:
                sys.stdout.write("\n")
            _write_table(sys.stdout, catalogue, current)
    return 0


def _as_json(catalogue: ProviderCatalogue, entry: CatalogueEntry,
             current: str | None) -> dict[str, Any]:
    info = entry.info
    deprecation = entry.deprecation
    return {
        "model": entry.model_string,
        "provider": entry.provider,
        "display_name": entry.display_name,
        "context_window": info.context_window,
        "max_output_tokens": info.max_output_tokens,
        "input_price": info.input_price,
        "output_price": info.output_price,
        "cache_read_price": info.cache_read_price,
        "cache_write_price": info.cache_write_price,
        "price_tiers": [
            {"above_input_tokens": t.above_input_tokens, "input_price": t.input_price,
             "output_price": t.output_price}
            for t in info.price_tiers
        ],
        "default": entry.is_default,
        "current": entry.model_string == current,
        "deprecated": None if deprecation is None else {
            "shutdown_date": deprecation.shutdown_date,
            "retired": deprecation.retired,
            "replacement": deprecation.replacement,
            "source": deprecation.source,
        },
        "source": catalogue.source,
    }


def _price(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _tokens(value: int) -> str:
    return f"{value:,}"


def _notes(entry: CatalogueEntry, current: str | None) -> str:
    notes: list[str] = []
    if entry.model_string == current:
        notes.append("current")
    if entry.is_default:
        notes.append("default")
    for tier in entry.info.price_tiers:
        notes.append(f"over {tier.above_input_tokens // 1000}k input: "
                     f"{_price(tier.input_price)}/{_price(tier.output_price)}")
    found = entry.deprecation
    if found is not None:
        if found.retired:
            text = "RETIRED"
        elif found.shutdown_date:
            text = f"DEPRECATED, shuts down {found.shutdown_date}"
        else:
            text = "DEPRECATED"
        if found.replacement:
            text += f", use {found.replacement}"
        notes.append(text)
    return "; ".join(notes)


def _write_table(out: TextIO, catalogue: ProviderCatalogue, current: str | None) -> None:
    source = catalogue.source
    if catalogue.fetched_at is not None:
        when = dt.datetime.fromtimestamp(catalogue.fetched_at).strftime("%Y-%m-%d %H:%M")
        source += f", {when}"
    count = len(catalogue.entries)
    out.write(f"{catalogue.provider}: {count} model{'s' * (count != 1)} ({source})\n")
    rows = [
        (e.model, _tokens(e.info.context_window), _tokens(e.info.max_output_tokens),
         _price(e.info.input_price), _price(e.info.output_price), _notes(e, current))
        for e in catalogue.entries
    ]
    widths = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(5)]
    for row in [_HEADER, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(widths[i]) for i, cell in enumerate(row[1:5], start=1)]
        out.write(("  " + "  ".join(cells) + ("  " + row[5] if row[5] else "")).rstrip() + "\n")
