"""Saved models: only the exact types a Luskin model holds are loaded; crafted files are refused in one sentence."""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
import skops.io as sio

from luskin_core.corrections import models
from luskin_core.corrections.retrain import load_model, model_bytes
from luskin_core.errors import LuskinError


def _frame(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n),
                         "c": pd.array(rng.choice(["x", "y", "z"], n), dtype="string"),
                         "y": rng.integers(0, 2, n)})


@pytest.mark.parametrize("kind", ["LR", "MLP", "SVM"])
def test_every_model_kind_luskin_saves_loads_back(kind: str) -> None:
    frame = _frame()
    model = models.make_model(kind, frame, ["a", "b", "c"]).fit(frame[["a", "b", "c"]], frame["y"])
    loaded = load_model(model_bytes(model))
    np.testing.assert_array_equal(loaded.predict(frame[["a", "b", "c"]]), model.predict(frame[["a", "b", "c"]]))


def _with_function(data: bytes, module: str, name: str) -> bytes:
    """A real saved model whose plain_missing step is rewritten to point at another function."""
    source = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(source.read("schema.json"))

    def rewrite(node: object) -> None:
        if isinstance(node, dict):
            if node.get("__module__") == "luskin_core.corrections.models" and node.get("__class__") == "plain_missing":
                node["__module__"], node["__class__"] = module, name
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for value in node:
                rewrite(value)

    rewrite(schema)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = json.dumps(schema).encode() if info.filename == "schema.json" else source.read(info)
            target.writestr(info.filename, body)
    return out.getvalue()


@pytest.mark.parametrize(("module", "name"), [("builtins", "exec"), ("builtins", "eval"), ("os", "system"),
                                              ("numpy.lib.npyio", "load"), ("numpy", "fromfile")])
def test_crafted_model_naming_a_code_running_helper_is_refused(module: str, name: str) -> None:
    frame = _frame()
    model = models.make_model("LR", frame, ["a", "c"]).fit(frame[["a", "c"]], frame["y"])
    crafted = _with_function(model_bytes(model), module, name)
    assert f"{module}.{name}" in sio.get_untrusted_types(data=crafted)
    with pytest.raises(LuskinError, match="not loaded for safety") as caught:
        load_model(crafted)
    assert f"{module}.{name}" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_file_that_is_not_a_model_is_refused_in_one_sentence(tmp_path) -> None:
    path = tmp_path / "model.skops"
    path.write_bytes(b"not a zip at all")
    with pytest.raises(LuskinError, match="not a model saved by Luskin"):
        load_model(path)


def test_csv_exports_neutralise_formula_cells_and_keep_negative_numbers() -> None:
    from luskin_core.export import csv_bytes

    frame = pd.DataFrame({"=cmd": pd.array(["=HYPERLINK(\"http://x\")", "+1+1", "-2-2", "@SUM(A1)", "\tx", "\rx",
                                            "plain", None], dtype="string"),
                          "score": [-3.5, 1.0, -0.25, 2.0, 0.0, -1.0, 5.0, -7.0],
                          "count": [-1, 2, 3, 4, 5, 6, 7, -8]})
    back = pd.read_csv(io.BytesIO(csv_bytes(frame)), keep_default_na=False)
    assert list(back.columns) == ["'=cmd", "score", "count"]
    assert list(back["'=cmd"]) == ["'=HYPERLINK(\"http://x\")", "'+1+1", "'-2-2", "'@SUM(A1)", "'\tx", "'\rx",
                                   "plain", ""]
    assert back["score"].tolist() == frame["score"].tolist()
    assert back["count"].tolist() == frame["count"].tolist()
    assert frame.columns[0] == "=cmd"  # the caller's frame is not changed


def _gzip_bomb(path, inflated: int) -> None:
    """A gzip CSV of one column whose rows are all "0": about 1,000 times smaller than what it inflates to.

    One gzip stream, as a bomb's maker would write it, built without compressing 2 GB: after a full flush the
    compressor starts afresh, so every 8 MB block of rows compresses to the same bytes, written as often as needed;
    the trailer carries the whole content's CRC-32 and size."""
    import struct
    import zlib

    block = b"0\n" * (8 << 20)
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = squeeze.compress(b"a\n") + squeeze.flush(zlib.Z_FULL_FLUSH)
    body = squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH)
    assert squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH) == body
    copies = inflated // len(block)
    crc = zlib.crc32(b"a\n")
    for _ in range(copies):
        crc = zlib.crc32(block, crc)
    with open(path, "wb") as out:
        out.write(head)
        out.writelines(body for _ in range(copies))
        out.write(b"\x03\x00")   # an empty last block: the deflate stream ends
        out.write(struct.pack("<II", crc, (2 + copies * len(block)) & 0xFFFFFFFF))


def test_a_gzip_bomb_is_refused_without_inflating_it_in_memory(tmp_path) -> None:
    import subprocess
    import sys

    bomb = tmp_path / "bomb.csv.gz"
    _gzip_bomb(bomb, 2 << 30)
    assert bomb.stat().st_size < 3 << 20
    # The peak is this child's own VmHWM (KiB): ru_maxrss would carry the forking pytest's high-water mark
    # over exec, so a big test process would hide the growth (or fail the absolute bound).
    child = ("import re, sys\n"
             "import luskin_core.counting.data as d\n"
             "from luskin_core.errors import LuskinError\n"
             "def hwm():\n"
             "    return int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
             "base = hwm()\n"
             "try:\n"
             "    d.load_csv(sys.argv[1])\n"
             "    print('loaded')\n"
             "except LuskinError as err:\n"
             "    print(str(err).replace(chr(10), ' '))\n"
             "print(base, hwm())\n")
    done = subprocess.run([sys.executable, "-c", child, str(bomb)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    message, figures = done.stdout.strip().splitlines()
    base_kib, peak_kib = (int(x) for x in figures.split())
    print(f"gzip bomb {bomb.stat().st_size / 2**20:.1f} MB -> 2 GB: refused with {message!r}; "
          f"peak RSS {peak_kib / 1024:.0f} MB (after imports {base_kib / 1024:.0f} MB)")
    assert "loaded" not in message and "Traceback" not in done.stderr
    assert "Once decompressed, the file is more than" in message   # refused for its size, not as damaged
    assert peak_kib - base_kib < 300 * 1024 and peak_kib < 600 * 1024  # far below the 2 GB it would inflate to


def _rewritten(data: bytes, change, files: dict[str, bytes] | None = None) -> bytes:
    """A saved model whose schema ``change`` edits in place (and whose stored files ``files`` replace)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    schema = json.loads(source.read("schema.json"))
    change(schema)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = json.dumps(schema).encode() if info.filename == "schema.json" else source.read(info)
            target.writestr(info.filename, (files or {}).get(info.filename, body))
    return out.getvalue()


def _nodes(node: object):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def _text(value: str) -> dict:
    return {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode", "content": json.dumps(value),
            "is_json": True}


def _called_with_file_arguments(module: str, name: str, loader: str):
    """Rewrite the plain_missing function node into ``module.name`` built by ``loader`` from the file's values."""
    def change(schema: dict) -> None:
        for node in _nodes(schema):
            if node.get("__class__") == "plain_missing":
                node.clear()
                node.update({"__class__": name, "__module__": module, "__loader__": loader,
                             "content": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                                         "content": [_text("float64")]}})
    return change


def _lr_bytes() -> bytes:
    frame = _frame()
    return model_bytes(models.make_model("LR", frame, ["a", "c"]).fit(frame[["a", "c"]], frame["y"]))


@pytest.mark.parametrize(("module", "name"), [("luskin_core.corrections.models", "plain_missing"), ("numpy", "dtype"),
                                              ("sklearn.neural_network._stochastic_optimizers", "AdamOptimizer")])
def test_a_trusted_type_under_a_calling_loader_is_refused_and_never_called(module, name, monkeypatch) -> None:
    saved = _lr_bytes()
    calls: list[tuple] = []
    original = models.plain_missing

    def spy(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(models, "plain_missing", spy)
    crafted = _rewritten(saved, _called_with_file_arguments(module, name, "ConstructorFromReduceNode"))
    with pytest.raises(LuskinError, match="not loaded for safety") as caught:
        load_model(crafted)
    assert f"{module}.{name}" in str(caught.value) and "\n" not in str(caught.value)
    assert calls == []


def _pipeline_state_is_a_number(schema: dict) -> None:
    schema["content"] = {"__class__": "int", "__module__": "builtins", "__loader__": "JsonNode", "content": "5",
                         "is_json": True}


def _function_as_object(schema: dict) -> None:
    for node in _nodes(schema):
        if node.get("__class__") == "plain_missing":
            node["__loader__"] = "ObjectNode"


def _first_array_file(data: bytes) -> str:
    return next(n for n in zipfile.ZipFile(io.BytesIO(data)).namelist() if n.endswith(".npy"))


@pytest.mark.parametrize("craft", ["state", "function_as_object", "array", "array_shape", "not_a_model"])
def test_crafted_model_files_are_refused_in_one_sentence(craft: str) -> None:
    data = _lr_bytes()
    if craft == "state":
        crafted = _rewritten(data, _pipeline_state_is_a_number)
    elif craft == "function_as_object":
        crafted = _rewritten(data, _function_as_object)
    elif craft == "array":
        crafted = _rewritten(data, lambda s: None, {_first_array_file(data): b"\x93NUMPY garbage"})
    elif craft == "array_shape":
        buffer = io.BytesIO()
        np.save(buffer, np.array(["a", "b"], dtype=object), allow_pickle=True)
        crafted = _rewritten(data, lambda s: None, {name: buffer.getvalue() for name in
                                                    zipfile.ZipFile(io.BytesIO(data)).namelist()
                                                    if name.endswith(".npy")})
    else:
        crafted = sio.dumps({"steps": [1, 2, 3]})
    with pytest.raises(LuskinError) as caught:
        load_model(crafted)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 300
    assert any(words in message for words in ("not loaded", "damaged", "not a model saved by Luskin")), message
