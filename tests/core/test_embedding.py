"""The embedding layer: the pinned model loads, vectors are unit length and mean something."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.semantic import embedding, model_cache
from core.semantic.embedding import Embedder, EmbeddingUnavailable, default_files, directory_files


@pytest.fixture(scope="module")
def model() -> Embedder:
    return Embedder.load(default_files())


def test_vectors_are_unit_length_and_384_wide(model: Embedder) -> None:
    vectors = model.encode(["The user's dog is named Luna", "", "x" * 5000])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_order_is_kept_across_batches_of_mixed_length(model: Embedder) -> None:
    texts = [("word " * (i % 40)) + f"item {i}" for i in range(70)]
    together = model.encode(texts)
    alone = np.stack([model.encode([t])[0] for t in texts[:5]])
    assert np.allclose(together[:5], alone, atol=1e-4)


def test_a_paraphrase_is_nearer_than_an_unrelated_fact(model: Embedder) -> None:
    q, dog, coffee, deadline = model.encode(
        [
            "what is my dog called?",
            "User's dog is named Luna",
            "The user prefers dark roast coffee",
            "The project deadline is next Friday",
        ]
    )
    assert float(q @ dog) > float(q @ coffee) + 0.2
    assert float(q @ dog) > float(q @ deadline) + 0.2


def test_a_damaged_model_file_is_refused(tmp_path: Path) -> None:
    files = default_files()
    bad = tmp_path / "model.onnx"
    bad.write_bytes(files.model.read_bytes()[:1000])
    with pytest.raises(EmbeddingUnavailable, match="sha256"):
        Embedder.load(embedding.ModelFiles(bad, files.tokenizer, "x", files.model_sha256, None))


def test_a_model_directory_setting_loads_a_local_copy(tmp_path: Path, model: Embedder) -> None:
    files = default_files()
    shutil.copy(files.model, tmp_path / "model.onnx")
    shutil.copy(files.tokenizer, tmp_path / "tokenizer.json")
    local = Embedder.load(directory_files(tmp_path))
    assert local.model_id.startswith("custom-")
    assert np.allclose(local.encode(["hello"]), model.encode(["hello"]), atol=1e-5)


def test_a_missing_directory_says_what_to_put_there(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailable, match=r"model\.onnx and tokenizer\.json"):
        directory_files(tmp_path)


def test_shared_embedder_falls_back_with_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedding.forget_shared()
    try:
        with caplog.at_level(logging.WARNING, logger="core.semantic.embedding"):
            assert embedding.shared_embedder(str(tmp_path)) is None
            assert embedding.shared_embedder(str(tmp_path)) is None
        lines = [r for r in caplog.records if "semantic search is off" in r.getMessage()]
        assert len(lines) == 1
        assert "model.onnx" in (embedding.unavailable_reason(str(tmp_path)) or "")
    finally:
        embedding.forget_shared()


def test_the_optimised_graph_is_cached_verified_and_rebuilt_when_damaged(
    tmp_path: Path, model: Embedder
) -> None:
    model_cache.set_cache_dir(tmp_path)
    try:
        first = Embedder.load(default_files())
        graphs = list(tmp_path.glob("*.onnx"))
        assert len(graphs) == 1 and graphs[0].with_name(graphs[0].name + ".sha256").exists()
        again = Embedder.load(default_files())
        texts = ["The user's dog is named Luna", "a question about pets?"]
        assert np.allclose(again.encode(texts), model.encode(texts), atol=1e-4)
        assert np.allclose(first.encode(texts), model.encode(texts), atol=1e-4)
        graphs[0].write_bytes(b"not a model")
        repaired = Embedder.load(default_files())
        assert np.allclose(repaired.encode(texts), model.encode(texts), atol=1e-4)
        assert graphs[0].stat().st_size > 1_000_000
    finally:
        model_cache.set_cache_dir(None)
