"""The one compiled part: `identifier_words` in C. Optional: where it cannot be built (no
C compiler or Python headers), the install goes on and the same function runs in Python."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "aistack_tui.knowledge._words",
            ["aistack_tui/knowledge/_words.c"],
            depends=["aistack_tui/knowledge/_words.h"],
            optional=True,
        )
    ]
)
