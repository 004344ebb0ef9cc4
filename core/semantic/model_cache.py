"""The embedding model's optimised graph, kept on disk so later starts need less memory.

onnxruntime optimises a model when it loads it, and for an int8 model that means
expanding the weights to float32 while the original stays in memory too: about
170 MB resident for all-MiniLM-L6-v2. Loading the already optimised graph with
optimisation off holds about 120 MB and answers as fast. So the first load
writes the optimised graph (about 90 MB) into ``<data dir>/model-cache/``, and
later loads use it once its recorded sha256 matches. The graph is derived from
the verified model by the installed runtime; its name carries both, so a new
model or runtime version makes a new one. Anything wrong with the cache falls
back to the original model, logged, never failing a search.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_cache_dir: Path | None = None


def set_cache_dir(path: Path | None) -> None:
    """Where optimised graphs go (composition roots set it; None turns the cache off)."""
    global _cache_dir
    _cache_dir = path


def cache_dir() -> Path | None:
    return _cache_dir


def cached_graph(
    model: Path, model_key: str, runtime: Any, base_options: Any, sha256_file: Any
) -> Path | None:
    """The optimised graph of ``model`` in the cache, written first if need be.

    Args:
        model: the verified model file.
        model_key: names the model (its id and hash).
        runtime: the ``onnxruntime`` module.
        base_options: makes a fresh ``SessionOptions`` with the caller's settings.
        sha256_file: hashes a file.
    """
    folder = _cache_dir
    if folder is None:
        return None
    graph = folder / f"{model_key}-ort{runtime.__version__}.onnx"
    stamp = graph.with_name(graph.name + ".sha256")
    try:
        if graph.is_file() and stamp.is_file():
            if sha256_file(graph) == stamp.read_text(encoding="ascii").strip():
                return graph
            log.warning("the cached model graph %s is damaged; writing it again", graph.name)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = graph.with_name(graph.name + ".partial")
        options = base_options()
        options.graph_optimization_level = runtime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(partial)
        runtime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        partial.chmod(0o600)
        digest = sha256_file(partial)
        os.replace(partial, graph)
        stamp.write_text(digest + "\n", encoding="ascii")
        stamp.chmod(0o600)
        return graph
    except Exception as exc:  # a full disk, a read-only folder, the runtime's own errors
        log.warning("cannot cache the optimised model graph (%s); loading the model itself", exc)
        return None
