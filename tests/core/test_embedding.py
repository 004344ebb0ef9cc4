"""The embedding layer: the pinned model loads, vectors are unit length and mean something."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.semantic import embedding
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


def test_the_shipped_model_is_the_pinned_export_with_its_lookup_tables_kept_int8(
    model: Embedder,
) -> None:
    """packaging/derive_model.py, run again on the pinned export, gives the shipped
    file byte for byte, and both graphs compute the same vectors."""
    from importlib import util

    script = Path(__file__).resolve().parents[2] / "packaging" / "derive_model.py"
    spec = util.spec_from_file_location("derive_model", script)
    assert spec is not None and spec.loader is not None
    derive_model = util.module_from_spec(spec)
    spec.loader.exec_module(derive_model)
    source = derive_model.source_model()
    derived = derive_model.derive(source)
    assert hashlib.sha256(derived).hexdigest() == embedding.MODEL_SHA256
    original = Embedder.load(
        embedding.ModelFiles(source, default_files().tokenizer, "export", None, None)
    )
    texts = ["The user's dog is named Luna", "a question about pets?", "x " * 300]
    assert np.array_equal(original.encode(texts), model.encode(texts))


def test_the_old_model_cache_is_removed_and_freed_memory_handed_back(tmp_path: Path) -> None:
    from core.storage.paths import DataDir
    from core.storage.worker import release_freed_memory

    old = tmp_path / "data" / "model-cache"
    old.mkdir(parents=True)
    (old / "all-MiniLM-L6-v2-int8-8199be6f699a-ort1.32.0.onnx").write_bytes(b"\0" * 1024)
    DataDir(tmp_path / "data").ensure()
    assert not old.exists()
    # glibc gives back what the test process freed; elsewhere the call is a no-op.
    assert isinstance(release_freed_memory(), bool)


def test_loading_the_model_leaves_no_telemetry_or_device_id(tmp_path: Path) -> None:
    # A bare environment: onnxruntime keeps quiet by itself when it sees CI variables.
    root = Path(__file__).resolve().parents[2]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONPATH": str(root),
    }
    load = "from core.semantic.embedding import Embedder, default_files as d; Embedder.load(d())"
    subprocess.run([sys.executable, "-c", load], env=env, cwd=tmp_path, check=True, timeout=60)
    assert [p.relative_to(tmp_path) for p in tmp_path.rglob("*")] == []
