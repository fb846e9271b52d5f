"""Built-in tools, one module per tool, with model-facing prompts in prompts/."""
