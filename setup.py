"""The one compiled part: `identifier_words` and the chunker in C (one module, `_words`).
Optional: where it cannot be built (no C compiler or Python headers), the install goes on
and the same functions run in Python."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "aistack_tui.knowledge._words",
            ["aistack_tui/knowledge/_words.c", "aistack_tui/knowledge/_chunks.c"],
            depends=["aistack_tui/knowledge/_words.h"],
            optional=True,
        )
    ]
)
