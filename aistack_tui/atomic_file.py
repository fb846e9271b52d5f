"""Writing one of aistack's own files so that a reader, or a second aistack process
writing it at the same moment, sees the old text or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file of its own beside `path`, then rename it over
    `path`. A failure leaves `path` as it was and no temporary file behind. The file is
    private to its owner (mode 0600), as mkstemp makes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
