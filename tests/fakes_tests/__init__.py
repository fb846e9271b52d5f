"""Tests of the fake LLM server through the real provider SDKs."""
