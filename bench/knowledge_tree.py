"""A generated repository for the code-index benchmark: a realistic mix of languages and
file sizes, plus the files a real repository carries that cannot matter to the model
(vendored dependencies, minified bundles, generated code, huge data files).

Deterministic (seeded), so two runs index the same bytes. The synthetic tree the bench
used before (20,000 near-identical five-line Python files) measured the per-file
overhead only; a real repository's time goes to parsing files of a few hundred lines in
a dozen languages, which is what the issue's "2x the parse floor" goal is about.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

# (language, extension, share of the source files)
MIX: tuple[tuple[str, str, float], ...] = (
    ("python", ".py", 0.30), ("typescript", ".ts", 0.16), ("tsx", ".tsx", 0.05),
    ("javascript", ".js", 0.10), ("go", ".go", 0.10), ("rust", ".rs", 0.06),
    ("java", ".java", 0.08), ("c", ".c", 0.04), ("c", ".h", 0.03), ("cpp", ".cpp", 0.03),
    ("ruby", ".rb", 0.02), ("bash", ".sh", 0.01), ("markdown", ".md", 0.02),
)  # fmt: skip
_WORDS = tuple(
    ["user", "order", "cart", "item", "price", "account", "session", "token", "request", "response", "cache", "store", "index", "query", "parse", "render", "event", "handler", "queue", "worker", "job", "retry", "config", "loader", "client", "server", "route", "path", "file", "buffer", "stream", "socket", "packet", "frame", "message", "payload", "record", "table", "column", "schema", "field", "value", "limit", "offset", "page", "filter", "sort", "merge", "split", "build", "check", "apply", "update", "delete", "create", "fetch", "load", "save", "open", "close", "start", "stop"]
)


@dataclass
class TreeCounts:
    """What was generated: indexable sources, other text files, and files to skip."""

    sources: int = 0
    text: int = 0
    source_paths: list[tuple[str, str]] = field(default_factory=list)
    """(project-relative path, language) of every source file that matters."""
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str, n: int = 1) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + n


def _name(rng: random.Random, parts: int = 2) -> list[str]:
    return [rng.choice(_WORDS) for _ in range(parts)]


def _snake(words: list[str]) -> str:
    return "_".join(words)


def _camel(words: list[str]) -> str:
    return words[0] + "".join(w.title() for w in words[1:])


def _pascal(words: list[str]) -> str:
    return "".join(w.title() for w in words)


def _body_lines(rng: random.Random, n: int, style: str) -> list[str]:
    """Statement-like lines: assignments, calls, conditionals."""
    out: list[str] = []
    for i in range(n):
        a, b = _camel(_name(rng)), _camel(_name(rng))
        if style == "py":
            a, b = _snake(_name(rng)), _snake(_name(rng))
            out.append(rng.choice((
                f"{a} = {b}({i}, limit=self.{a}_{i % 7})",
                f"if {a} is not None and {a} > {i}:  {b}.append({a} * {i})",
                f"for {a} in {b}_{i % 5}: total += len({a})",
                f"# {a.replace('_', ' ')} before {b.replace('_', ' ')}",
            )))  # fmt: skip
        elif style == "rb":
            out.append(f"{_snake(_name(rng))} = {_snake(_name(rng))}({i})")
        elif style == "sh":
            out.append(f'{_snake(_name(rng)).upper()}="${{{i}}}"; echo "$PWD/{a}"')
        else:
            end = ";" if style != "go" else ""
            out.append(rng.choice((
                f"const {a}{i} = {b}({i}, opts){end}" if style in ("ts", "js") else
                f"{a}{i} := {b}({i})" if style == "go" else
                f"let {a}{i} = {b}({i}){end}" if style == "rs" else
                f"int {a}{i} = {b}({i}){end}",
                f"if ({a} > {i}) {{ {b}({a}){end} }}" if style != "go" else
                f"if {a} > {i} {{ {b}({a}) }}",
                f"// {a} then {b}",
            )))  # fmt: skip
    return out


def _indent(lines: list[str], pad: str) -> list[str]:
    return [pad + line for line in lines]


def _python(rng: random.Random, funcs: int, body: int) -> str:
    out = ['"""Module doc: ' + " ".join(_name(rng, 6)) + '."""', "",
           "from __future__ import annotations", "import os", "import json", ""]  # fmt: skip
    cls = _pascal(_name(rng))
    out += [f"class {cls}:", f'    """{" ".join(_name(rng, 5))}."""', ""]
    for _ in range(funcs):
        name = _snake(_name(rng, 3))
        out += [f"    def {name}(self, {_snake(_name(rng))}: int, limit: int = 10) -> list:",
                f'        """{" ".join(_name(rng, 6))}."""', "        total = 0",
                *_indent(_body_lines(rng, body, "py"), "        "), "        return []", ""]  # fmt: skip
    out += [f"def {_snake(_name(rng, 3))}() -> {cls}:", f"    return {cls}()", ""]
    return "\n".join(out)


def _c_like(rng: random.Random, funcs: int, body: int, lang: str) -> str:
    style = {"typescript": "ts", "tsx": "ts", "javascript": "js", "go": "go", "rust": "rs"}
    s = style.get(lang, "c")
    out: list[str] = [f"// {' '.join(_name(rng, 8))}"]
    if lang == "go":
        out += ["package " + rng.choice(_WORDS), "", 'import "fmt"', ""]
        typ = _pascal(_name(rng))
        out += [f"type {typ} struct {{", "\tID int", "\tName string", "}", ""]
        for _ in range(funcs):
            out += [f"// {_pascal(_name(rng))} does {' '.join(_name(rng, 4))}.",
                    f"func (s *{typ}) {_pascal(_name(rng, 3))}(n int) int {{",
                    *_indent(_body_lines(rng, body, s), "\t"), '\tfmt.Println("x")',
                    "\treturn n", "}", ""]  # fmt: skip
    elif lang == "rust":
        typ = _pascal(_name(rng))
        out += ["use std::collections::HashMap;", "", f"pub struct {typ} {{ id: u64 }}", "",
                f"impl {typ} {{"]  # fmt: skip
        for _ in range(funcs):
            out += [f"    /// {' '.join(_name(rng, 5))}",
                    f"    pub fn {_snake(_name(rng, 3))}(&self, n: u64) -> u64 {{",
                    *_indent(_body_lines(rng, body, s), "        "), "        n", "    }", ""]  # fmt: skip
        out += ["}", ""]
    elif lang == "java":
        typ = _pascal(_name(rng))
        out += ["package com.example." + rng.choice(_WORDS) + ";", "",
                "import java.util.List;", "", f"public class {typ} {{"]  # fmt: skip
        for _ in range(funcs):
            out += [f"    /** {' '.join(_name(rng, 5))} */",
                    f"    public int {_camel(_name(rng, 3))}(int n) {{",
                    *_indent(_body_lines(rng, body, s), "        "), "        return n;",
                    "    }", ""]  # fmt: skip
        out += ["}", ""]
    elif lang in ("typescript", "tsx", "javascript"):
        out += [f"import {{ {_camel(_name(rng))} }} from './{rng.choice(_WORDS)}';", ""]
        typ = _pascal(_name(rng))
        ann = ": number" if lang != "javascript" else ""
        if lang != "javascript":
            out += [f"export interface {typ}Props {{ id: number; name: string }}", ""]
        out += [f"export class {typ} {{"]
        for _ in range(funcs):
            out += [f"  /** {' '.join(_name(rng, 5))} */",
                    f"  {_camel(_name(rng, 3))}(n{ann}){ann} {{",
                    *_indent(_body_lines(rng, body, s), "    "), "    return n;", "  }", ""]  # fmt: skip
        out += ["}", ""]
        if lang == "tsx":
            out += [f"export function {typ}View(props: {typ}Props) {{",
                    "  return <div className=\"x\">{props.name}</div>;", "}", ""]  # fmt: skip
    else:  # c, cpp
        out += ["#include <stdio.h>", "#include <stdlib.h>", ""]
        if lang == "cpp":
            typ = _pascal(_name(rng))
            out += [f"class {typ} {{", " public:", "  int run(int n);", "};", ""]
        for _ in range(funcs):
            out += [f"/* {' '.join(_name(rng, 5))} */",
                    f"int {_snake(_name(rng, 3))}(int n) {{",
                    *_indent(_body_lines(rng, body, s), "    "), "    return n;", "}", ""]  # fmt: skip
    return "\n".join(out)


def _header(rng: random.Random, funcs: int) -> str:
    out = ["#pragma once", ""]
    out += [f"int {_snake(_name(rng, 3))}(int n);" for _ in range(funcs * 2)]
    out += [f"#define {_snake(_name(rng)).upper()} {i}" for i in range(funcs)]
    return "\n".join(out) + "\n"


def _ruby(rng: random.Random, funcs: int, body: int) -> str:
    out = [f"# {' '.join(_name(rng, 6))}", f"class {_pascal(_name(rng))}"]
    for _ in range(funcs):
        out += [f"  def {_snake(_name(rng, 3))}(n)", *_indent(_body_lines(rng, body, "rb"), "    "),
                "  end", ""]  # fmt: skip
    return "\n".join([*out, "end", ""])


def _bash(rng: random.Random, funcs: int, body: int) -> str:
    out = ["#!/usr/bin/env bash", "set -euo pipefail", ""]
    for _ in range(funcs):
        out += [f"{_snake(_name(rng, 3))}() {{", *_indent(_body_lines(rng, body, "sh"), "  "),
                "}", ""]  # fmt: skip
    return "\n".join(out)


def _markdown(rng: random.Random, funcs: int, body: int) -> str:
    out = [f"# {' '.join(_name(rng, 3)).title()}", ""]
    for _ in range(funcs):
        out += [f"## {' '.join(_name(rng, 3)).title()}", ""]
        out += [" ".join(_name(rng, 12)) + "." for _ in range(max(1, body // 3))]
        out += ["", "```", f"{_snake(_name(rng))}()", "```", ""]
    return "\n".join(out)


def source_file(rng: random.Random, lang: str, ext: str) -> str:
    """One file of `lang`, with a long-tailed size (most a few hundred lines, a few
    thousand): functions ~ lognormal, statements per function 3-25."""
    funcs = max(1, min(120, int(rng.lognormvariate(1.8, 0.8))))
    body = rng.randint(3, 25)
    if ext == ".h":
        return _header(rng, funcs)
    if lang == "python":
        return _python(rng, funcs, body)
    if lang == "ruby":
        return _ruby(rng, funcs, body)
    if lang == "bash":
        return _bash(rng, funcs, body)
    if lang == "markdown":
        return _markdown(rng, funcs, body)
    return _c_like(rng, funcs, body, lang)


def _minified(rng: random.Random, kb: int) -> str:
    parts = [f"function {_camel(_name(rng))}{i}(a,b){{return a+b*{i}}}" for i in range(kb * 25)]
    return ";".join(parts) + "\n"


def _generated(rng: random.Random, lang: str) -> str:
    marker = {
        "go": "// Code generated by protoc-gen-go. DO NOT EDIT.",
        "python": "# Generated by the protocol buffer compiler.  DO NOT EDIT!",
        "typescript": "// This file is auto-generated by graphql-codegen. Do not edit.",
        "java": "// @generated by javapoet",
    }[lang]
    ext = {"go": ".go", "python": ".py", "typescript": ".ts", "java": ".java"}[lang]
    return marker + "\n" + source_file(rng, lang, ext)


def generate_tree(root: Path, sources: int = 10_000, seed: int = 26) -> TreeCounts:
    """Write the tree under `root`; returns what was generated.

    About `sources` indexable source files in ~40 per folder, one config file in five
    folders, and on top the unindexable share of a real monorepo: `node_modules/` and
    `vendor/` copies, `.min.js` and suffix-less minified bundles, generated code marked
    by its header, and a few multi-megabyte data files.
    """
    rng = random.Random(seed)
    counts = TreeCounts()
    weights = [share for _, _, share in MIX]
    for i in range(sources):
        lang, ext, _ = rng.choices(MIX, weights)[0]
        folder = root / f"src/{_WORDS[i // 1600 % len(_WORDS)]}/m{i // 40:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{_snake(_name(rng))}_{i}{ext}"
        path.write_text(source_file(rng, lang, ext))
        counts.sources += 1
        counts.source_paths.append((path.relative_to(root).as_posix(), lang))
        if i % 200 == 0:
            (folder / "config.yaml").write_text(
                "\n".join(f"{w}: {rng.randint(0, 99)}" for w in _name(rng, 30)) + "\n"
            )
            counts.text += 1
    # Vendored dependencies: whole folders of real-looking code that must not be walked.
    for k in range(sources // 2):
        where = ("node_modules/pkg{:03d}/lib", "vendor/github.com/x/m{:03d}",
                 "third_party/lib{:03d}/src")[k % 3].format(k // 60)  # fmt: skip
        folder = root / where
        folder.mkdir(parents=True, exist_ok=True)
        ext = (".js", ".go", ".c")[k % 3]
        lang = ("javascript", "go", "c")[k % 3]
        (folder / f"f{k}{ext}").write_text(source_file(rng, lang, ext))
        counts.skip("vendored")
    assets = root / "web/assets"
    assets.mkdir(parents=True, exist_ok=True)
    for k in range(sources // 50):
        (assets / f"bundle{k}.min.js").write_text(_minified(rng, 20))
        (assets / f"chunk-{k:04x}.js").write_text(_minified(rng, 30))  # no .min: by content
        counts.skip("minified", 2)
    gen = root / "src/generated"
    gen.mkdir(parents=True, exist_ok=True)
    for k in range(sources // 25):
        lang = ("go", "python", "typescript", "java")[k % 4]
        ext = {"go": ".go", "python": ".py", "typescript": ".ts", "java": ".java"}[lang]
        (gen / f"api_{k}{ext}").write_text(_generated(rng, lang))
        counts.skip("generated")
    data = root / "src/data"
    data.mkdir(parents=True, exist_ok=True)
    for k in range(3):
        rows = [f"  [{', '.join(str(rng.randint(0, 9999)) for _ in range(12))}]," for _ in
                range(22_000)]  # fmt: skip
        (data / f"table_{k}.py").write_text("TABLE = [\n" + "\n".join(rows) + "\n]\n")
        counts.skip("huge")
    return counts


@cache
def _parser(lang: str) -> object | None:
    """A bare tree-sitter parser for `lang`, from the grammar wheel the index uses.

    Loaded here, not through the index's `grammar()`: the floor is tree-sitter alone,
    and whatever the code under test compiles next to its parser is not part of it (its
    queries, which `grammar()` once compiled eagerly: 0.28 CPU-s per process, counted in
    the floor until then). The same floor for every version of the code measured."""
    import importlib

    from tree_sitter import Language, Parser

    from aistack_tui.knowledge.languages import _GRAMMARS  # the language -> wheel table

    spec = _GRAMMARS.get(lang)
    if spec is None:
        return None
    try:
        module = importlib.import_module(spec[0])
    except ImportError:
        return None
    return Parser(Language(getattr(module, spec[1])()))


def parse_only(root: str, batch: list[tuple[str, str]]) -> float:
    """Worker: read and tree-sitter-parse `batch` (nothing else); returns CPU seconds."""
    import time

    started = time.process_time()
    for rel, lang in batch:
        parser = _parser(lang)
        if parser is not None:
            parser.parse((Path(root) / rel).read_bytes())  # type: ignore[attr-defined]
    return time.process_time() - started


def parse_floor(root: Path, files: list[tuple[str, str]], workers: int) -> tuple[float, float]:
    """Wall and CPU seconds for tree-sitter alone to parse `files` on `workers` processes
    (a fresh pool each time, as the indexer starts one: its start-up is part of both; at
    the indexer's worker niceness, so other load on the machine weighs on both alike)."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    from aistack_tui.knowledge.pipeline import lower_priority

    batches = [files[i : i + 48] for i in range(0, len(files), 48)]
    started = time.perf_counter()
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=lower_priority) as pool:
        cpu = sum(pool.map(parse_only, [str(root)] * len(batches), batches))
    return time.perf_counter() - started, cpu
