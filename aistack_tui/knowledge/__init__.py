"""Code knowledge: tree-sitter index, repo map and hybrid code search."""
