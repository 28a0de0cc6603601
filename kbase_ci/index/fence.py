"""The boundary where native code runs on files kbase did not write: tokenizers (a
model's `tokenizer.json`), onnxruntime (its graph) and usearch (a shard's
`vectors.usearch`); a static model's weights are parsed in Python (`staticmodel`).

Those libraries fail in more ways than `Exception`: tokenizers (Rust, through pyo3)
raises `pyo3_runtime.PanicException`, a `BaseException`, for a regex its engine cannot
compile, which went past every handler and killed the CLI (exit 3) and the whole MCP
server (issue 28). `fenced` turns any failure but an interrupt or an exit into the
caller's kbase error, so the query above it refuses that model or graph, says so, and
falls back (BM25, an exact scan); a build stops with exit 2 naming the model.

What no handler can catch (a segfault in native code reading a forged graph) is kept
out by validating the input first: kbase_ci.index.graphcheck for usearch graphs; a
model is only ever one the user chose (kbase_ci.index.modelchoice).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kbase_ci.errors import KbaseError

T = TypeVar("T")
PASS = (KeyboardInterrupt, SystemExit, GeneratorExit)
"""What is never turned into a refusal: the user's interrupt and the process's exit."""


def fenced(what: str, call: Callable[[], T], error: type[KbaseError]) -> T:
    """`call()`, with any failure of the code it runs (kbase's own errors aside) raised
    as `error("WHAT: KIND: MESSAGE")`."""
    try:
        return call()
    except KbaseError:
        raise
    except PASS:
        raise
    except BaseException as exc:  # pyo3's PanicException is one
        detail = " ".join(str(exc).split())[:300] or "no message"
        raise error(f"{what}: {type(exc).__name__}: {detail}") from None
