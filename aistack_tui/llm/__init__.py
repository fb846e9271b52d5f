"""Provider-agnostic LLM layer: types, adapters over the official SDKs, retries."""
