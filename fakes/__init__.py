"""Protocol-faithful fakes the test suite and the benchmarks share: LLM servers speaking
the Anthropic, OpenAI and Gemini wire formats (`fake_llm`), the providers' models
endpoints, the Telegram Bot API, MCP servers that misbehave, and small helper programs.

A package of its own beside `tests/` and `bench/` (not inside either), so both import it
and neither imports the other. Nothing here is installed with aistack."""
