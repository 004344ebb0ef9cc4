"""A person's own model folder: what runs is used, what cannot run is refused or turned
off with the reason, and no search fails because of it.

The models here are real ONNX graphs run by onnxruntime, built small with ``onnx``:
a lookup table of token vectors, pooled by Ambry or by the model itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace

from core.model.config import Config
from core.model.entries import Actor
from core.semantic import embedding
from core.semantic.backfill import EmbeddingWorker
from core.semantic.embedding import Embedder, EmbeddingUnavailable, directory_files
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.test_cli import run

WORDS = ("dimension", "probe", "alpha", "beta", "gamma", "delta", "bees", "roof")
SCALARS = {"zero": 0, "one": 1}


def _folder(
    path: Path,
    *,
    table_rows: int = 16,
    pooled: bool = False,
    input_name: str = "input_ids",
    vocab: dict[str, int] | None = None,
    ids_first: bool = False,
    vectors: bool = True,
    nan_id: int | None = None,
    positions: int | None = None,
) -> Path:
    """A model folder: ``model.onnx`` (token ids -> vectors from a random table) and a
    word-level ``tokenizer.json`` giving each of :data:`WORDS` its own id.

    ``ids_first``: the graph's first output is the token ids as floats, one per token
    (as some exports list them); ``vectors=False`` leaves the vectors out; the token
    ``nan_id`` is given a vector that is not a number; ``positions`` adds a position
    table of that many rows, as BERT has (longer texts fail)."""
    path.mkdir()
    vocab = vocab or {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(WORDS)}}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()  # type: ignore[assignment]
    tokenizer.save(str(path / "tokenizer.json"))
    table = np.random.default_rng(7).normal(size=(table_rows, 8)).astype(np.float32)
    if nan_id is not None:
        table[nan_id] = np.nan
    weights = [numpy_helper.from_array(table, "table")]
    nodes = [helper.make_node("Gather", ["table", input_name], ["states"])]
    if positions is not None:
        weights += [
            numpy_helper.from_array(np.zeros((positions, 8), np.float32), "positions"),
            *(numpy_helper.from_array(np.array(v, np.int64), n) for n, v in SCALARS.items()),
        ]
        nodes[0] = helper.make_node("Gather", ["table", input_name], ["words"])
        nodes += [
            helper.make_node("Shape", [input_name], ["shape"]),
            helper.make_node("Gather", ["shape", "one"], ["length"]),
            helper.make_node("Range", ["zero", "length", "one"], ["places"]),
            helper.make_node("Gather", ["positions", "places"], ["where"]),
            helper.make_node("Add", ["words", "where"], ["states"]),
        ]
    out_shape: list[str | int] = ["batch", "tokens", 8]
    if pooled:
        nodes.append(helper.make_node("ReduceMean", ["states"], ["out"], axes=[1], keepdims=0))
        out_shape = ["batch", 8]
    else:
        nodes.append(helper.make_node("Identity", ["states"], ["out"]))
    outputs = [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)] * vectors
    if ids_first:
        nodes.append(helper.make_node("Cast", [input_name], ["ids"], to=TensorProto.FLOAT))
        ids = helper.make_tensor_value_info("ids", TensorProto.FLOAT, ["batch", "tokens"])
        outputs.insert(0, ids)
    graph = helper.make_graph(
        nodes,
        "lookup",
        [
            helper.make_tensor_value_info(input_name, TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        outputs,
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path / "model.onnx"))
    return path


@pytest.fixture(autouse=True)
def _forget_models() -> Iterator[None]:
    yield
    embedding.forget_shared()


@pytest.mark.parametrize("pooled", [False, True])
def test_a_model_is_used_whether_ambry_or_the_model_pools_the_tokens(
    tmp_path: Path, pooled: bool
) -> None:
    folder = _folder(tmp_path / "model", pooled=pooled)
    model = Embedder.load(directory_files(folder))
    assert model.dimensions == 8
    found = model.encode(["alpha beta", "beta alpha", "gamma delta"])
    assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-5)
    assert found[0] @ found[1] == pytest.approx(1.0, abs=1e-5)  # same words, same mean
    assert found[0] @ found[2] < 0.99


@pytest.mark.parametrize("pooled", [False, True])
def test_the_vectors_are_found_among_the_outputs_whatever_comes_first(
    tmp_path: Path, pooled: bool
) -> None:
    # Before, the first output was taken: one float per token, as wide as the probe
    # text, and texts of other lengths then failed every search.
    model = Embedder.load(directory_files(_folder(tmp_path / "m", pooled=pooled, ids_first=True)))
    assert model.dimensions == 8
    texts = ["alpha", "alpha beta gamma delta bees roof", "beta alpha"]
    found = model.encode(texts)
    assert found.shape == (3, 8)
    plain = Embedder.load(directory_files(_folder(tmp_path / "plain", pooled=pooled)))
    assert np.allclose(found, plain.encode(texts))


def test_a_model_that_cannot_take_as_many_tokens_as_ambry_embeds_is_refused_when_named(
    tmp_path: Path,
) -> None:
    assert Embedder.load(directory_files(_folder(tmp_path / "ok", positions=300))).dimensions == 8
    # Before, it loaded, and the first memory longer than its 128 positions turned
    # search by meaning off for the rest of the process.
    with pytest.raises(EmbeddingUnavailable, match="fails on a text of 256 tokens"):
        Embedder.load(directory_files(_folder(tmp_path / "short", positions=128)))


def test_a_model_without_vectors_among_its_outputs_is_refused_with_the_reason(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path / "model", ids_first=True, vectors=False)
    with pytest.raises(EmbeddingUnavailable, match=r"no output of one vector .*outputs: ids\)"):
        Embedder.load(directory_files(folder))


def test_search_by_meaning_runs_on_a_persons_own_model(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "model")
    data = DataDir(tmp_path / "data")
    data.ensure()
    service = MemoryService(data, Config(embedding_model_dir=str(folder)))
    try:
        who = service.open_session("main", Actor.AGENT, "test")
        ids = {
            text: service.store(who, {"type": "fact", "content": text}).entry.id
            for text in ("alpha beta", "gamma delta")
        }
        service.start_embedding()
        assert service.embedding is not None and service.embedding.wait_idle(30)
        first = service.search(who, {"query": "beta alpha", "mode": "semantic"})[0]
        assert first.id == ids["alpha beta"] and first.signals[0] == "semantic"
    finally:
        service.close()


def test_a_model_without_token_ids_is_refused_with_the_reason(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "model", input_name="tokens")
    with pytest.raises(EmbeddingUnavailable, match="takes attention_mask, tokens, not input_ids"):
        Embedder.load(directory_files(folder))


def test_a_tokenizer_that_does_not_fit_the_model_is_refused_when_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The tokenizer's ids run past the model's table (a tokenizer from another model).
    vocab = {"[UNK]": 0, "dimension": 500, "probe": 501}
    folder = _folder(tmp_path / "model", vocab=vocab)
    with pytest.raises(EmbeddingUnavailable, match="failed on a text"):
        Embedder.load(directory_files(folder))
    assert embedding.shared_embedder(str(folder)) is None
    assert "failed on a text" in (embedding.unavailable_reason(str(folder)) or "")
    # Named in the settings, it is refused there, and the file is left as it was.
    data = tmp_path / "data"
    code, _, err = run(
        capsys, "--data-dir", str(data), "--create", "settings", "embedding_model_dir", str(folder)
    )
    assert code != 0 and "failed on a text" in err
    assert not (data / "config.json").exists() or "model" not in (data / "config.json").read_text()


def test_a_model_that_fails_on_a_later_text_turns_search_to_words_never_to_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # It embeds the load-time probe, but any other word is past the end of its table.
    vocab = {"dimension": 1, "probe": 2, "[UNK]": 50}
    folder = _folder(tmp_path / "model", vocab=vocab)
    data = DataDir(tmp_path / "data")
    data.ensure()
    data.config_file.write_text(json.dumps({"embedding_model_dir": str(folder)}))
    service = MemoryService(data, Config(embedding_model_dir=str(folder)))
    said: list[str] = []
    try:
        who = service.open_session("main", Actor.AGENT, "test")
        bees = service.store(who, {"type": "fact", "content": "The user keeps bees"}).entry.id
        assert embedding.shared_embedder(str(folder)) is not None  # it loads
        # A search meets the failure: it answers by words, and the model is off.
        # (A query of unknown words alone is not given to the model at all.)
        results = service.search(who, {"query": "probe bees"})
        assert [r.id for r in results] == [bees] and results[0].signals[0] == "keyword"
        assert "failed on a text" in (embedding.unavailable_reason(str(folder)) or "")
        assert sum("semantic search is off" in r.message for r in caplog.records) == 1
        assert service.search(who, {"query": "bees"})[0].id == bees
        assert sum("semantic search is off" in r.message for r in caplog.records) == 1
        # The background worker says so once, and stops asking the model.
        embedding.forget_shared(str(folder))
        worker = EmbeddingWorker(str(folder))
        worker.on_unavailable = said.append
        try:
            worker.wake(data.group_db("main"), "main")
            assert worker.wait_idle(30)
        finally:
            worker.close()
        assert len(said) == 1 and "failed on a text" in said[0]
    finally:
        service.close()
    embedding.forget_shared(str(folder))
    code, out, err = run(capsys, "--data-dir", str(data.root), "reindex")
    assert code != 0 and "semantic search is off" in err and "failed on a text" in err
    code, out, _ = run(capsys, "--data-dir", str(data.root), "search", "bees")
    assert code == 0 and "The user keeps bees" in out


def test_a_model_giving_a_vector_that_is_not_a_number_is_turned_off_not_stored(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path / "model", nan_id=WORDS.index("bees") + 1)
    data = DataDir(tmp_path / "data")
    data.ensure()
    service = MemoryService(data, Config(embedding_model_dir=str(folder)))
    try:
        who = service.open_session("main", Actor.AGENT, "test")
        alpha = service.store(who, {"type": "fact", "content": "alpha beta"}).entry.id
        bees = service.store(who, {"type": "fact", "content": "alpha bees"}).entry.id
        service.start_embedding()
        assert service.embedding is not None and service.embedding.wait_idle(30)
        assert "not a number" in (embedding.unavailable_reason(str(folder)) or "")
        stored = service.store_for("main").execute("SELECT count(*) FROM memory_vectors")
        assert stored.fetchone()[0] == 0  # the batch held the bad vector: none of it kept
        results = service.search(who, {"query": "alpha"})
        assert {r.id for r in results} == {alpha, bees}
        assert all(r.signals[0] == "keyword" for r in results)
        assert json.dumps([r.relevance_score for r in results], allow_nan=False)
    finally:
        service.close()
