"""Code knowledge: tree-sitter index, repo map and hybrid code search."""

from aistack_tui.knowledge.indexer import KnowledgeIndex
from aistack_tui.knowledge.types import CodeHit, IndexStats

__all__ = ["CodeHit", "IndexStats", "KnowledgeIndex"]
