"""Reading a user's CSV into a pandas DataFrame: the CSV engine behind :func:`luskin_core.counting.data.load_csv`.

Every file ends in a DataFrame with stripped text, real missing values and numeric columns as
numbers, or in a :class:`LuskinError` that says in plain words what is wrong. Moved out of
``data.py`` unchanged (``data`` re-exports every name); samples and presets stay there.
"""

from __future__ import annotations

import codecs
import collections
import csv
import gzip
import io
import mmap
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: the command line's checks of a CSV counted by DuckDB never need it
    from luskin_core._lazy import pandas as pd

MAX_BYTES = 1_000_000_000  # beyond 1 GB a browser upload and an in-memory table are impractical
MISSING_MARKERS = ["", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "#N/A"]
_DELIMITERS = ",;\t|"


# --------------------------------------------------------------------------------------
# A user's CSV
# --------------------------------------------------------------------------------------
# How a CSV is read. The bytes come from a regular file or from memory (an upload); a gzip is
# inflated as a stream, and counted before anything is parsed, so a small file that inflates
# past the limit costs a little CPU time and no memory. The first 64 KB tell the format
# (refusing zip, Excel, JSON, binary ... with a sentence that says what the file is), the
# encoding (UTF-8, UTF-16/32 with or without a byte-order mark, else Latin-1) and the delimiter.
# pyarrow then parses the file: a UTF-8 file is cut into pieces of up to 1 MB at line ends (never
# inside a quoted value), parsed on a few threads at once and gathered in order, so that only a
# few pieces are in memory beside the result (pyarrow's own whole-file reader keeps the raw
# file beside the table; its streaming reader parses on one thread). Columns whose first rows
# are numbers are parsed as numbers (missing markers become missing as it reads); the others
# are text, stripped, and become numbers when every present value is one (pandas' rules; 'inf'
# and numbers beyond float64's range become missing: no model or statistic can use them).
# Other encodings, and quotes pyarrow might read differently from their count, go through
# pyarrow's streaming reader. Files pyarrow's strict reader refuses (rows shorter than the
# header, a quote after a space) are read by pandas' C parser, as before; a ragged file gets a
# sentence naming the line.
_SAMPLE_BYTES = 1 << 16
_BLOCK_BYTES = 1 << 22            # pyarrow's block: a row must fit in one (grown on demand)
# A piece parsed on a thread: 1/256 of the file within these bounds (small pieces keep the memory
# in flight small: on 10,000,000 rows, 1 MB pieces peak at 1.93x the file, 4 MB ones at 2.0x).
_PIECE_BYTES = (1 << 18, 1 << 20)
_PIECE_SHARE = 256
_MAX_WORKERS = 4                  # pieces parsed at once (each in flight costs about three pieces' size)
MAX_COLUMNS = 20_000              # beyond this a file is not a table a person audits
_WHITESPACE_EDGE = np.zeros(256, dtype=bool)
_WHITESPACE_EDGE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
_WHITESPACE_EDGE[128:] = True     # any non-ASCII first/last byte: let the Unicode-aware trim decide
_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel 97-2003 workbook (.xls) or another Office file"),
    (b"PAR1", "a Parquet file"),
    (b"%PDF", "a PDF document"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"BZh", "compressed with bzip2"),
    (b"\xfd7zXZ\x00", "compressed with xz"),
    (b"\x28\xb5\x2f\xfd", "compressed with zstd"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"\x1f\x8b", "compressed twice with gzip"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
)


def _too_big(size: int | None, limit: int, *, inflated: bool = False) -> str:
    what = ("Once decompressed, the file is more than" if size is None
            else f"The file is {size / 1e6:,.0f} MB{', decompressed,' if inflated else ''} more than")
    return (f"{what} the {limit / 1e6:,.0f} MB this tool reads. "
            "Keep only the columns and rows you need (or a random sample) and try again.")


_DAMAGED_GZIP = "The file looks compressed (gzip) but is damaged and cannot be opened."


class _Inflating(io.RawIOBase):
    """A gzip stream inflated as it is read, refused as soon as it passes ``limit`` bytes."""

    def __init__(self, raw: IO[bytes], limit: int) -> None:
        super().__init__()
        self._raw = raw
        self._gzip = gzip.GzipFile(fileobj=raw, mode="rb")
        self._limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        try:
            chunk = self._gzip.read(size if size is not None and size >= 0 else self._limit + 1 - self.count)
        except (OSError, EOFError, zlib.error):
            raise LuskinError(_DAMAGED_GZIP) from None
        self.count += len(chunk)
        if self.count > self._limit:
            raise LuskinError(_too_big(None, self._limit))
        return chunk

    def readinto(self, buffer: Any) -> int:
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        try:
            self._gzip.close()
            self._raw.close()
        finally:
            super().close()


class CsvBytes:
    """Bytes to read as a CSV, from a regular file or memory; reopened for each pass."""

    def __init__(self, source: str | os.PathLike[str] | bytes | IO[bytes], max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.path: Path | None = None
        self.data: bytes | memoryview | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self.data = source if isinstance(source, (bytes, memoryview)) else bytes(source)
            size = len(self.data)
        elif hasattr(source, "read"):
            self.data = source.read(max_bytes + 1)  # type: ignore[union-attr]
            if not isinstance(self.data, (bytes, bytearray)):
                raise LuskinError("The upload could not be read as a file of bytes.")
            size = len(self.data)
        else:
            self.path = Path(source)
            size = _regular_file_size(self.path)
        if size > max_bytes:
            raise LuskinError(_too_big(size, max_bytes))
        self.size = size
        with self._open_raw() as raw:
            self.gzip = raw.read(2) == b"\x1f\x8b"
        if self.gzip:
            self.size = self._inflated_size()

    def _open_raw(self) -> IO[bytes]:
        if self.path is None:
            return io.BytesIO(self.data)  # type: ignore[arg-type]
        try:
            return open(self.path, "rb")
        except OSError as err:
            raise LuskinError(f"Cannot open '{self.path}': {err.strerror or err}.") from None

    def open(self) -> IO[bytes]:
        """A fresh binary stream of the (inflated) content, from its start."""
        raw = self._open_raw()
        return _Inflating(raw, self.max_bytes) if self.gzip else raw  # type: ignore[return-value]

    def arrow_input(self) -> Any:
        """The content as pyarrow reads it fastest: native reads for a plain file, zero copy for bytes."""
        import pyarrow as pa

        if self.gzip:
            return self.open()
        if self.path is not None:
            try:
                return pa.OSFile(str(self.path), "r")
            except OSError as err:
                raise LuskinError(f"Cannot open '{self.path}': {err}.") from None
        return pa.BufferReader(pa.py_buffer(self.data))

    def head(self, size: int) -> tuple[bytes, bool]:
        """The first ``size`` bytes of the content, and whether that is all of it."""
        with self.open() as stream:
            data = stream.read(size + 1)
        return data[:size], len(data) <= size

    def _inflated_size(self) -> int:
        """Inflate once without keeping anything: refuse a damaged gzip or one past the limit.

        The trailer's size is not trusted: a truncated or damaged file ends in arbitrary bytes, and
        reading them as a size called such a file "more than 1,000 MB" rather than damaged.
        """
        with self.open() as stream:
            while stream.read(1 << 20):
                pass
            return stream.count  # type: ignore[attr-defined, no-any-return]


def _regular_file_size(path: Path) -> int:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise LuskinError(f"There is no file at '{path}'.") from None
    except OSError as err:
        raise LuskinError(f"Cannot open '{path}': {err.strerror or err}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise LuskinError(f"'{path}' is a folder, not a data file.")
    if not stat.S_ISREG(info.st_mode):
        raise LuskinError(f"'{path}' is not a regular file (it is a device, a pipe or a socket): "
                          "save the data as a CSV file and give that file's path.")
    return info.st_size


@dataclass(frozen=True)
class _Layout:
    """What the first bytes say: the encoding, the delimiter and the header's names."""

    encoding: str               # a Python codec name
    delimiter: str
    names: tuple[str, ...] | None
    kinds: tuple[str, ...]      # per header name: "int", "float" or "text", guessed from the first rows
    quote_after_space: bool
    bytes_per_row: float        # in the first rows: to size the number columns before reading


def _what_binary(head: bytes) -> str | None:
    """What a binary file is, in a user's words (None: it may be text)."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        if b"[Content_Types].xml" in head[:2048] or b"xl/" in head[:2048]:
            return "an Excel workbook (.xlsx) or another zipped Office file"
        return "a zip or Excel file"
    for signature, what in _SIGNATURES:
        if head.startswith(signature):
            return what
    return None


def _encoding(head: bytes, at_end: bool) -> str:
    """UTF-32/16 by byte-order mark or zero-byte pattern, UTF-8 if it decodes, Latin-1 otherwise."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    probe = head[:4096]
    if len(probe) >= 4 and b"\x00" in probe:
        pairs = len(probe) // 2
        odd = probe[1::2].count(0) / pairs
        even = probe[0::2].count(0) / pairs
        # UTF-16 without a byte-order mark: mostly ASCII text, so nearly every other byte is zero
        if odd > 0.7 and even < 0.02:
            return "utf-16-le"
        if even > 0.7 and odd < 0.02:
            return "utf-16-be"
        raise LuskinError("This file is not text (it looks like a binary file). Save your table as CSV first.")
    controls = sum(probe.count(bytes([c])) for c in (*range(1, 9), 14, 15, *range(16, 28), 127))
    if probe and controls > 0.05 * len(probe):
        raise LuskinError("This file is not text (it looks like a binary file). Save your table as CSV first.")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=at_end)
        return "utf-8"
    except UnicodeDecodeError:
        return "latin-1"


def decode_head(head: bytes, encoding: str, at_end: bool) -> str:
    decoder = codecs.getincrementaldecoder("utf-8-sig" if encoding == "utf-8" else encoding)(errors="replace")
    return decoder.decode(head, final=at_end)


def _refuse_other_formats(text: str) -> None:
    start = text.lstrip("\ufeff \t\r\n")
    lowered = start[:64].lower()
    if start.startswith("{") or (start.startswith("[") and start[1:].lstrip()[:1] in ("{", "[", '"')):
        raise LuskinError("This is a JSON file, not a CSV. Save the table as CSV (comma separated) first.")
    if lowered.startswith(("<!doctype html", "<html", "<?xml", "<table", "<head", "<body")):
        raise LuskinError("This is a web page or an XML document, not a CSV. Save the table as CSV (comma separated) "
                          "first.")


def _sniff_delimiter(text: str) -> str:
    """The delimiter among comma, semicolon, tab and pipe, from the first lines (comma when unsure)."""
    sample = "\n".join(text[:_SAMPLE_BYTES].splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        header = sample.splitlines()[0] if sample else ""
        counts = {d: header.count(d) for d in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


# What pyarrow's number parsers take as they read and pandas reads the same way; anything else
# (a '+' sign, blanks around, 'inf') is read as text first and converted afterwards.
_INT_TEXT = re.compile(r"-?[0-9]{1,18}")
_FLOAT_TEXT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


def _kind(values: Iterable[str]) -> str:
    """'int', 'float' or 'text': how a column's first values say it should be read."""
    present = [v for v in values if v not in MISSING_MARKERS]
    if present and all(_INT_TEXT.fullmatch(v) for v in present):
        return "int"
    if present and all(_FLOAT_TEXT.fullmatch(v) for v in present):
        return "float"
    return "text"


def read_layout(source: CsvBytes) -> _Layout:
    head, at_end = source.head(_SAMPLE_BYTES)
    if not head.strip():
        raise LuskinError("The file is empty: there is nothing to read.")
    what = _what_binary(head)
    if what:
        raise LuskinError(f"This is {what}, not a CSV. Open it and save the table as CSV (comma separated) first.")
    encoding = _encoding(head, at_end)
    text = decode_head(head, encoding, at_end)
    if not text.strip():
        raise LuskinError("The file is empty: there is nothing to read.")
    _refuse_other_formats(text)
    delimiter = _sniff_delimiter(text)
    names: tuple[str, ...] | None = None
    rows: list[list[str]] = []
    try:
        reader = csv.reader(io.StringIO(text if at_end else text[: text.rfind("\n") + 1] or text),
                            delimiter=delimiter)
        for row in reader:
            if not row:
                continue
            if names is None:
                names = tuple(row)
            elif len(rows) < 2000:
                rows.append(row)
            else:
                break
    except csv.Error:  # e.g. a field longer than the csv module's limit: let pyarrow read the header
        names = None
    width = len(names or ())
    if width > MAX_COLUMNS and not at_end and "\n" not in text:  # the header goes on past the first 64 KB
        raise LuskinError(f"The file's header row names more than {width - 1:,} columns, more than the "
                          f"{MAX_COLUMNS:,} this tool reads. Keep only the columns you need and try again.")
    kinds = tuple(_kind(r[i] for r in rows if i < len(r)) for i in range(width))
    per_row = len(head) / max(1, len(rows) + 1) if not at_end else 1.0
    blanks = "[ ]+" if delimiter == "\t" else "[ \t]+"
    after_space = re.compile(rf"(^|{re.escape(delimiter)}){blanks}\"", re.MULTILINE)
    return _Layout(encoding, delimiter, names, kinds, bool(after_space.search(text)), per_row)


def check_width(width: int) -> None:
    if width > MAX_COLUMNS:
        raise LuskinError(f"The file has {width:,} columns, more than the {MAX_COLUMNS:,} this tool reads. "
                          "Keep only the columns you need and try again.")


class _Restart(Exception):
    """A read to start again with other settings (a column's type, the block size, the encoding)."""


class _NumberColumn:
    """A column read as numbers, copied batch by batch into one array sized from the file's size.

    pyarrow's batch is freed as soon as it is copied, so the numbers exist once; pages of the
    array beyond the last row are never touched and cost no memory.
    """

    def __init__(self, kind: str, capacity: int) -> None:
        self.kind = kind
        self.values = _buffer(capacity, np.int64 if kind == "int" else np.float64)
        self.missing = _buffer(capacity, np.bool_)
        self.size = 0

    def append(self, array: Any) -> None:
        n = len(array)
        if self.size + n > len(self.values):
            grow = max(self.size + n, int(len(self.values) * 1.5) + 1024)
            self.values = np.resize(self.values, grow)
            self.missing = np.resize(self.missing, grow)
        width = self.values.dtype.itemsize
        self.values[self.size:self.size + n] = np.frombuffer(array.buffers()[1], dtype=self.values.dtype,
                                                            count=n, offset=array.offset * width)
        if array.null_count:
            np.logical_not(_valid(array), out=self.missing[self.size:self.size + n])
        else:
            self.missing[self.size:self.size + n] = False
        self.size += n

    def finish(self) -> pd.api.extensions.ExtensionArray:
        values, missing = self.values[:self.size], self.missing[:self.size]
        if self.kind == "int":
            return pd.arrays.IntegerArray(values, missing)
        bad = ~np.isfinite(values)  # as _finite, in place: the array is this column's own
        bad |= missing
        values[bad] = 0.0
        return pd.arrays.FloatingArray(values, bad)


def _buffer(count: int, dtype: Any) -> np.ndarray[Any, Any]:
    """An uninitialised array whose memory is taken only as it is written.

    Sized from an estimate with a margin, most of it is filled. numpy asks for huge pages
    (2 MB) for large arrays, so the last one touched costs up to 2 MB whatever is written in
    it; here huge pages cover the first 70 % (quick to fill), small pages the rest.
    """
    size = count * np.dtype(dtype).itemsize
    if size < 1 << 22 or not hasattr(mmap, "MAP_PRIVATE"):
        return np.empty(count, dtype=dtype)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    huge = int(size * 0.7) >> 21 << 21
    if huge and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            memory.madvise(mmap.MADV_HUGEPAGE, 0, huge)
        except OSError:  # a kernel without transparent huge pages
            pass
    return np.frombuffer(memory, dtype=dtype, count=count)


def _valid(array: Any) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which values of a pyarrow array are present, from its validity bitmap (numpy: no pyarrow memory)."""
    n, bits = len(array), array.buffers()[0]
    if bits is None:
        return np.ones(n, dtype=bool)
    packed = np.frombuffer(bits, dtype=np.uint8, count=(array.offset + n + 7) // 8)
    return np.unpackbits(packed, bitorder="little")[array.offset:array.offset + n].view(bool)


class _TextColumn:
    """A text column copied piece by piece into one buffer of bytes and one of offsets.

    Each piece's text is freed as soon as it is copied, so the pieces' many small allocations
    never stay behind between the kept ones (they would, interleaved, in any allocator); the
    buffers are sized from the file's size, and pages beyond the last value are never touched.
    A piece that does not fit starts a new chunk.
    """

    def __init__(self, rows: int, size: int) -> None:
        self.chunks: list[Any] = []
        self._start(rows, size)

    def _start(self, rows: int, size: int) -> None:
        self.offsets = _buffer(rows + 1, np.int64)
        self.offsets[0] = 0
        self.data = _buffer(max(size, 1), np.uint8)
        self.bits = np.empty(rows // 8 + 1, dtype=np.uint8)
        self.rows = self.size = self.nulls = 0

    def append(self, array: Any) -> None:
        n = len(array)
        buffers = array.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64, count=n + 1, offset=array.offset * 8)
        first, last = int(offsets[0]), int(offsets[-1])
        if self.rows + n >= len(self.offsets) or self.size + last - first > len(self.data):
            self._finish_chunk()
            self._start(max(2 * n, len(self.offsets) - 1), max(2 * (last - first), len(self.data)))
        np.subtract(offsets[1:], first - self.size, out=self.offsets[self.rows + 1:self.rows + n + 1])
        if last > first:
            self.data[self.size:self.size + last - first] = np.frombuffer(buffers[2], dtype=np.uint8,
                                                                           count=last - first, offset=first)
        self._set_bits(_valid(array) if array.null_count else np.ones(n, dtype=bool))
        self.nulls += array.null_count
        self.rows += n
        self.size += last - first

    def _set_bits(self, valid: np.ndarray[Any, np.dtype[np.bool_]]) -> None:
        """Write these validity bits at ``self.rows`` (least significant bit first, as Arrow)."""
        at = self.rows
        head = min((-at) % 8, len(valid))
        if head:  # finish the byte begun by the previous piece
            shifted = int(np.packbits(valid[:head], bitorder="little")[0]) << (at % 8)
            self.bits[at // 8] = (int(self.bits[at // 8]) & ((1 << (at % 8)) - 1)) | shifted
            valid, at = valid[head:], at + head
        if len(valid):
            packed = np.packbits(valid, bitorder="little")
            self.bits[at // 8:at // 8 + len(packed)] = packed

    def _finish_chunk(self) -> None:
        import pyarrow as pa

        if self.rows == 0:
            return
        bits = pa.py_buffer(self.bits[:(self.rows + 7) // 8]) if self.nulls else None
        self.chunks.append(pa.Array.from_buffers(
            pa.large_string(), self.rows,
            [bits, pa.py_buffer(self.offsets[:self.rows + 1]), pa.py_buffer(self.data[:self.size])],
            null_count=self.nulls))

    def finish(self) -> Any:
        import pyarrow as pa

        self._finish_chunk()
        self.offsets = self.data = self.bits = np.empty(0, dtype=np.uint8)
        return pa.chunked_array(self.chunks, type=pa.large_string())


def _read_arrow(source: CsvBytes, layout: _Layout) -> tuple[list[str], list[Any], bool] | None:
    """Every column with pyarrow: numbers as numbers, the rest as text (UTF-8 in parallel pieces).

    Columns whose first rows are all numbers are parsed as numbers while reading; when a later
    value is not one, the read starts again with that column as text. Returns None when the
    file is for pandas' parser (rows shorter than the header, ...). The flag says whether the
    text is stripped already.
    """
    import pyarrow as pa

    kinds: dict[str, str] = {}
    for name, kind in zip(layout.names or (), layout.kinds):
        kinds[name] = kind if kinds.get(name, kind) == kind else "text"
    settings = {"encoding": layout.encoding, "newlines": False, "block": _BLOCK_BYTES, "pieces": True}
    rows = int(source.size / max(layout.bytes_per_row, 1.0) * 1.25) + 1024
    for _ in range(12):
        try:
            if settings["pieces"] and settings["encoding"] == "utf-8":
                read = _read_pieces(source, layout.delimiter, kinds, settings, rows)
                return None if read is None else (*read, True)
            read = _stream(source, layout.delimiter, kinds, settings, rows)
            return None if read is None else (*read, False)
        except _Restart:
            continue
        except pa.ArrowMemoryError:
            raise LuskinError("There is not enough memory to read this file. Keep only the columns and rows "
                              "you need (or a random sample) and try again.") from None
    return None


_CONVERSION = re.compile(r"In CSV column #(\d+): .*CSV conversion error to (\w+): invalid value '(.*)'", re.DOTALL)


def _stream(source: CsvBytes, delimiter: str, kinds: dict[str, str], settings: dict[str, Any],
            rows: int) -> tuple[list[str], list[Any]] | None:
    """One pass of :func:`_read_arrow`; raises _Restart with ``kinds``/``settings`` changed."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    arrow_type = {"int": pa.int64(), "float": pa.float64(), "text": pa.large_string()}
    encoding = settings["encoding"]
    stream = source.arrow_input() if encoding == "utf-8" else source.open()
    names: list[str] = []
    try:
        reader = pcsv.open_csv(
            stream,
            read_options=pcsv.ReadOptions(block_size=settings["block"],
                                          encoding="utf8" if encoding == "utf-8" else encoding),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=settings["newlines"]),
            convert_options=pcsv.ConvertOptions(column_types={n: arrow_type[k] for n, k in kinds.items()},
                                                null_values=MISSING_MARKERS, strings_can_be_null=True,
                                                quoted_strings_can_be_null=True),
        )
        names = reader.schema.names
        check_width(len(names))
        numbers: dict[int, _NumberColumn] = {}
        texts: dict[int, list[Any]] = {}
        for i, field_ in enumerate(reader.schema):
            if pa.types.is_int64(field_.type) or pa.types.is_float64(field_.type):
                numbers[i] = _NumberColumn("int" if pa.types.is_int64(field_.type) else "float", rows)
            else:
                texts[i] = []
        for batch in reader:
            for i, column in numbers.items():
                column.append(batch.column(i))
            for i, parts in texts.items():
                parts.append(batch.column(i))
            del batch
    except pa.ArrowInvalid as err:
        _arrow_refused(err, names, kinds, settings, source.size)
        return None                           # ragged or otherwise odd: pandas' parser says which line
    finally:
        stream.close()
    columns: list[Any] = []
    for i, field_ in enumerate(reader.schema):
        if i in numbers:
            columns.append(numbers.pop(i).finish())
        else:
            columns.append(pa.chunked_array(texts.pop(i), type=field_.type))
    return names, columns


def _arrow_refused(err: Exception, names: list[str], kinds: dict[str, str], settings: dict[str, Any],
                   size: int) -> None:
    """What to do when pyarrow refuses the file: raise _Restart with ``kinds``/``settings`` changed,
    raise a LuskinError, or return (the file is for pandas' parser)."""
    message = str(err)
    found = _CONVERSION.search(message)
    if found and names and int(found.group(1)) < len(names):
        name, value = names[int(found.group(1))], found.group(3)
        # A later value is not a number of that kind: a float if it reads as one, else text.
        kinds.update({n: kinds.get(n, "text") for n in names})
        kinds[name] = "float" if found.group(2) == "int64" and _FLOAT_TEXT.fullmatch(value) else "text"
        raise _Restart() from None
    if "out of sync with chunker" in message and not settings["newlines"]:
        settings["newlines"] = True     # a quoted value spans lines across a block boundary
        raise _Restart() from None
    if "straddl" in message and settings["block"] < size:
        settings["block"] = min(settings["block"] * 16, max(size + 1, _BLOCK_BYTES))
        raise _Restart() from None
    if "invalid UTF8" in message and settings["encoding"] == "utf-8":
        settings["encoding"] = "latin-1"  # UTF-8 at the start, not further on
        raise _Restart() from None
    if "Empty CSV" in message:
        raise LuskinError("The file is empty: there is nothing to read.") from None


class _Unsafe(Exception):
    """Pieces cannot be cut safely (quotes pyarrow may read otherwise, a very long row): read serially."""


def _cut(data: bytes, start: int, end: int) -> int:
    """Just after the last line end in ``data[start:end]`` that is outside quotes (-1: none).

    A piece starts outside quotes, so a line end is outside them when an even number of quote
    characters precede it in the piece (:func:`_plain_quotes` checks that pyarrow agrees).
    """
    at = data.rfind(b"\n", start, end)
    if at < 0 or data.find(b'"', start, at) < 0:
        return at + 1 if at >= 0 else -1
    quotes = data.count(b'"', start, at)
    while quotes % 2:
        before = data.rfind(b"\n", start, at)
        if before < 0:
            return -1
        quotes -= data.count(b'"', before, at)
        at = before
    return at + 1


def _plain_quotes(piece: Any, delimiter: str, first: bool) -> bool:
    """Whether pyarrow reads this piece's quotes as their count says (checked where there are some).

    True when every quote that opens (by count) starts a field or doubles the quote just before
    it, and every quote that closes ends a field or is doubled: then pyarrow's state (inside or
    outside a quoted value) is the count's everywhere, and the piece ends outside quotes. A quote
    inside an unquoted value (5'11") or after a space fails the check.
    """
    data = np.frombuffer(piece, dtype=np.uint8)
    quotes = np.flatnonzero(data == 34)
    if not len(quotes):
        return True
    ends = np.array([ord(delimiter), 10, 13, 34], dtype=np.uint8)
    opening, closing = quotes[0::2], quotes[1::2]
    start = 3 if first and bytes(data[:3]) == codecs.BOM_UTF8 else 0
    before = data[np.maximum(opening - 1, 0)]
    if not ((opening == start) | np.isin(before, ends)).all():
        return False
    after = data[np.minimum(closing + 1, len(data) - 1)]
    return bool(((closing == len(data) - 1) | np.isin(after, ends)).all())


def _pieces(source: CsvBytes, size: int) -> Iterator[tuple[Any, bool]]:
    """The content in pieces of about ``size`` bytes, each ending at a line end outside quotes,
    with whether it holds a quote. Zero copy for bytes in memory; a regular file is read piece by
    piece; a gzip is inflated as it goes."""
    if source.data is not None and not source.gzip:
        data = bytes(source.data) if not isinstance(source.data, bytes) else source.data
        view, start = memoryview(data), 0
        while start < len(data):
            end = len(data) if start + size >= len(data) else _cut(data, start, start + size)
            grown = size
            while end < 0:                       # a row longer than a piece: look further
                grown *= 2
                if grown > 4 * size:
                    raise _Unsafe()
                end = len(data) if start + grown >= len(data) else _cut(data, start, start + grown)
            yield view[start:end], data.find(b'"', start, end) >= 0
            start = end
        return
    with source.open() as stream:
        seekable = stream.seekable()  # a file: read the rest of a cut row again (no copy); a gzip: carry it
        carry = b""
        while True:
            block = stream.read(size)
            data = carry + block if carry else block
            while block:
                end = _cut(data, 0, len(data))
                if end > 0:
                    break
                if len(data) > 4 * size:
                    raise _Unsafe()
                block = stream.read(size)
                data += block
            if not block:                        # the end: the rest, whatever it ends with
                if data:
                    yield data, b'"' in data
                return
            yield memoryview(data)[:end], data.find(b'"', 0, end) >= 0
            if seekable:
                stream.seek(end - len(data), io.SEEK_CUR)
            else:
                carry = data[end:]


def _memory_pool() -> Any:
    """The C library's allocator for the pieces: it gives freed pieces back to the system when
    asked (``release_unused``), where pyarrow's default pool keeps them, so the peak stays near
    the result's own size."""
    import pyarrow as pa

    return pa.system_memory_pool()


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, _MAX_WORKERS))


def _read_pieces(source: CsvBytes, delimiter: str, kinds: dict[str, str], settings: dict[str, Any],
                 rows: int) -> tuple[list[str], list[Any]] | None:
    """One pass of :func:`_read_arrow` over a UTF-8 file, in pieces parsed on a few threads.

    The first piece gives the names and the types (as pyarrow's streaming reader takes them
    from its first block); each later piece is parsed with them on a worker (text stripped
    there) and gathered in order, copied into the final arrays and freed. At most a few pieces
    are in flight. Raises _Restart as :func:`_stream` does.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    arrow_type = {"int": pa.int64(), "float": pa.float64(), "text": pa.large_string()}
    types: dict[str, Any] = {n: arrow_type[k] for n, k in kinds.items()}
    names: list[str] = []
    memory = _memory_pool()

    def parse(piece: Any, quoted: bool, first: bool) -> list[Any]:
        if quoted and not _plain_quotes(piece, delimiter, first):
            raise _Unsafe()
        table = pcsv.read_csv(
            pa.BufferReader(pa.py_buffer(piece)),
            read_options=pcsv.ReadOptions(use_threads=False, block_size=len(piece) + 1,
                                          column_names=None if first else names),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=quoted),
            convert_options=pcsv.ConvertOptions(column_types=types, null_values=MISSING_MARKERS,
                                                strings_can_be_null=True, quoted_strings_can_be_null=True),
            memory_pool=memory,
        )
        if first:
            names.extend(table.schema.names)
            schema.extend(table.schema.types)
        columns = []
        for column in table.columns:
            chunks = column.chunks
            if pa.types.is_large_string(column.type):  # stripped here, a piece at a time
                chunks = [_clean_text(c, memory) if _needs_trim(c) else c for c in chunks]
            columns.append(chunks)
        return columns

    schema: list[Any] = []
    numbers: dict[int, _NumberColumn] = {}
    texts: dict[int, _TextColumn] = {}
    others: dict[int, list[Any]] = {}  # a type pyarrow guessed (a name the first rows did not show)

    def gather(columns: list[Any]) -> None:
        for i, chunks in enumerate(columns):
            column = numbers.get(i) or texts.get(i)
            for chunk in chunks:
                if column is None:
                    others[i].append(chunk)
                else:
                    column.append(chunk)
        columns.clear()
        memory.release_unused()  # hand the piece's freed memory back now, not at the allocator's leisure

    workers = _workers()
    threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="luskin-csv") if workers > 1 else None
    pending: collections.deque[Any] = collections.deque()
    try:
        pieces = _pieces(source, min(_PIECE_BYTES[1], max(_PIECE_BYTES[0], source.size // _PIECE_SHARE)))
        for piece, quoted in pieces:
            if not names:
                first = parse(piece, quoted, first=True)
                check_width(len(names))
                types.update({n: t for n, t in zip(names, schema) if n not in kinds})
                share = source.size / max(len(piece), 1) * 1.25  # the file's size over the piece's, and a margin
                for i, kind in enumerate(schema):
                    if pa.types.is_int64(kind) or pa.types.is_float64(kind):
                        numbers[i] = _NumberColumn("int" if pa.types.is_int64(kind) else "float", rows)
                    elif pa.types.is_large_string(kind):
                        texts[i] = _TextColumn(rows, int(sum(_text_bytes(c) for c in first[i]) * share) + (1 << 16))
                    else:
                        others[i] = []
                gather(first)
                del first
            elif threads is None:
                gather(parse(piece, quoted, first=False))
            else:
                pending.append(threads.submit(parse, piece, quoted, False))
                if len(pending) >= workers:
                    gather(pending.popleft().result())
            del piece
        while pending:
            gather(pending.popleft().result())
    except _Unsafe:
        settings["pieces"] = False
        raise _Restart() from None
    except pa.ArrowInvalid as err:
        _arrow_refused(err, names, kinds, settings, source.size)
        return None                           # ragged or otherwise odd: pandas' parser says which line
    finally:
        for future in pending:
            future.cancel()
        if threads is not None:
            threads.shutdown(wait=True)
    if not names:
        raise LuskinError("The file is empty: there is nothing to read.")
    columns: list[Any] = []
    for i, kind in enumerate(schema):
        if i in numbers:
            columns.append(numbers.pop(i).finish())
        elif i in texts:
            columns.append(texts.pop(i).finish())
        else:
            columns.append(pa.chunked_array(others.pop(i), type=kind))
    return names, columns


def _text_bytes(array: Any) -> int:
    """The bytes of text a large_string array holds."""
    if not len(array):
        return 0
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64, count=len(array) + 1, offset=array.offset * 8)
    return int(offsets[-1] - offsets[0])


_RAGGED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_UNCLOSED = re.compile(r"EOF inside string starting at row (\d+)")


def _read_pandas(source: CsvBytes, layout: _Layout) -> tuple[list[str], list[Any]]:
    """Every column as text with pandas' C parser: rows shorter than the header, spaces before quotes."""
    import pyarrow as pa

    encoding = layout.encoding
    for _ in range(2):
        try:
            with source.open() as stream:
                frame = pd.read_csv(stream, sep=layout.delimiter, skipinitialspace=True, dtype=str,
                                    keep_default_na=False, na_values=[], engine="c",
                                    encoding="utf-8-sig" if encoding == "utf-8" else encoding)
            break
        except UnicodeDecodeError:
            encoding = "latin-1"
        except pd.errors.EmptyDataError:
            raise LuskinError("The file is empty: there is nothing to read.") from None
        except pd.errors.ParserError as err:
            unclosed = _UNCLOSED.search(str(err))
            if unclosed:
                raise LuskinError(
                    f"The file could not be read as a table: a double quote (\") in data row "
                    f"{int(unclosed.group(1)):,} opens a quoted value that is never closed. Remove that quote, or "
                    "close it, and load the file again.") from None
            found = _RAGGED.search(str(err))
            separator = _DELIMITER_NAMES.get(layout.delimiter, repr(layout.delimiter))
            where = (f"line {int(found.group(2)):,} has {int(found.group(3)):,} fields where the header has "
                     f"{int(found.group(1)):,}" if found else "its rows do not all have the same number of fields")
            raise LuskinError(
                f"The file could not be read as a table: {where}, and every row needs the same number of fields "
                f"separated by {separator}. Check that it is a CSV with one header row, and that text holding "
                f"the separator is in quotes.") from None
        except MemoryError:
            raise LuskinError("There is not enough memory to read this file. Keep only the columns and rows "
                              "you need (or a random sample) and try again.") from None
    else:  # pragma: no cover - Latin-1 decodes every byte
        raise LuskinError("The file's text encoding could not be recognised. Save it as UTF-8 CSV.")
    check_width(frame.shape[1])
    columns = [_as_arrow(frame.iloc[:, i]) for i in range(frame.shape[1])]
    return [str(c) for c in frame.columns], [pa.chunked_array([c]) if isinstance(c, pa.Array) else c
                                             for c in columns]


def _as_arrow(series: pd.Series) -> Any:
    import pyarrow as pa

    return pa.array(series.astype("string").array)


def clean_names(names: Iterable[Any]) -> list[str]:
    """Names stripped (line breaks and tabs inside become spaces), blanks named, duplicates numbered.

    Names that become equal once stripped ('age' and 'age ') are told apart as pandas tells
    repeated names apart: 'age', 'age.1'.
    """
    cleaned = [" ".join(str(n).split()) if any(ch in str(n) for ch in "\r\n\t\v\f") else str(n).strip()
               for n in names]
    cleaned = [name or f"Unnamed: {i}" for i, name in enumerate(cleaned)]
    taken: set[str] = set()
    out = []
    for name in cleaned:
        candidate, k = name, 0
        while candidate in taken:
            k += 1
            candidate = f"{name}.{k}"
        taken.add(candidate)
        out.append(candidate)
    return out


def _needs_trim(column: Any) -> bool:
    """Whether some value starts or ends with white space (or a non-ASCII byte that might be)."""
    import pyarrow as pa

    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    for chunk in getattr(column, "chunks", [column]):  # a ChunkedArray or one Array
        if chunk.null_count == len(chunk):
            continue
        buffers = chunk.buffers()
        if buffers[2] is None:
            continue
        offsets: np.ndarray[Any, np.dtype[np.integer[Any]]] = np.frombuffer(
            buffers[1], dtype=width, count=len(chunk) + 1, offset=chunk.offset * np.dtype(width).itemsize)
        data = np.frombuffer(buffers[2], dtype=np.uint8)
        start, end = offsets[:-1], offsets[1:]
        filled = end > start
        if _WHITESPACE_EDGE[data[start[filled]]].any() or _WHITESPACE_EDGE[data[end[filled] - 1]].any():
            return True
    return False


def _contains_byte(column: Any, values: bytes) -> bool:
    """Whether any value holds one of these bytes (a scan of the text buffers, no copy)."""
    import pyarrow as pa

    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    wanted = np.frombuffer(values, dtype=np.uint8)
    for chunk in column.chunks:
        buffers = chunk.buffers()
        if buffers[2] is None or len(chunk) == 0:
            continue
        offsets = np.frombuffer(buffers[1], dtype=width, count=len(chunk) + 1,
                                offset=chunk.offset * np.dtype(width).itemsize)
        data = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        if np.isin(data, wanted).any():
            return True
    return False


def _clean_text(column: Any, memory: Any = None) -> Any:
    """Blanks stripped, and values that are then blank or a missing marker made missing."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = pc.utf8_trim_whitespace(column, memory_pool=memory)
    marker = pc.is_in(column, value_set=pa.array(MISSING_MARKERS, column.type), memory_pool=memory)
    if pc.any(marker).as_py():
        column = pc.if_else(marker, pa.scalar(None, column.type), column, memory_pool=memory)
    return column


def _finite(values: np.ndarray, missing: np.ndarray | None = None) -> pd.api.extensions.ExtensionArray:
    """Float64 with NaN, infinities and numbers past float64's range as missing."""
    bad = ~np.isfinite(values)
    if missing is not None:
        bad |= missing
    return pd.arrays.FloatingArray(np.where(bad, 0.0, values), bad)


def _numbers(column: Any) -> pd.api.extensions.ExtensionArray | None:
    """The column as Int64 or Float64 when every present value is a number; None otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count == len(column):
        return None
    # A cast fails when one value fails: try the first values before casting (and allocating) all.
    probe = next((chunk.slice(0, 1000) for chunk in getattr(column, "chunks", [column]) if len(chunk)), None)
    if probe is not None and not (_casts(probe, pa.int64()) or _casts(probe, pa.float64())):
        return None
    try:
        whole = pc.cast(column, pa.int64(), memory_pool=_memory_pool())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        whole = None
    # pyarrow reads '0x1F' as 31; pandas (and so Luskin) keeps it as text.
    if whole is not None and not pc.any(pc.starts_with(column, "0x", ignore_case=True)).as_py():
        return _int64().__from_arrow__(whole)
    try:
        real = pc.cast(column, pa.float64(), memory_pool=_memory_pool())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if _contains_byte(column, b"+") and pc.all(pc.match_substring_regex(column, r"^[+-]?[0-9]+$")).as_py():
        try:  # '+5' is an integer to pandas
            return _int64().__from_arrow__(pc.cast(pc.replace_substring_regex(column, r"^\+", ""), pa.int64()))
        except pa.ArrowInvalid:
            pass  # beyond int64: a float
    return _finite(real.to_numpy())


def _int64() -> Any:
    """pandas' Int64 type (its __from_arrow__, Int64 from a pyarrow array, is not in pandas' type stubs)."""
    return pd.Int64Dtype()


def _casts(values: Any, kind: Any) -> bool:
    """Whether pyarrow casts every one of these values to ``kind``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        pc.cast(values, kind, memory_pool=_memory_pool())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


# A character no number pandas reads can hold (it reads digits, signs, a point, an exponent,
# blanks, inf, infinity and nan): a value with one makes pd.to_numeric fail, without asking it.
_NOT_A_NUMBER = re.compile(r"[^0-9+\-._\sinftyaeINFTYAE\x80-\U0010ffff]")


def _numbers_like_pandas(column: Any) -> pd.api.extensions.ExtensionArray | None:
    """pandas' own number parsing, for the rare value pyarrow reads differently (checked on 200 first)."""
    first: list[Any] = []
    for chunk in column.chunks:
        for start in range(0, len(chunk), 256):  # a slice at a time: no copy of a whole column
            first.extend(v for v in chunk.slice(start, 256).to_pylist() if v is not None)
            if len(first) >= 200:
                break
        if len(first) >= 200:
            break
    first = first[:200]
    if not first or any(_NOT_A_NUMBER.search(v) for v in first):
        return None
    try:
        pd.to_numeric(pd.Series(first, dtype="string"))
    except (ValueError, TypeError, OverflowError):
        return None
    text = pd.Series(pd.arrays.ArrowStringArray(column.cast(_large_string())))
    numbers = pd.to_numeric(text, errors="coerce")
    if numbers.notna().sum() != len(column) - column.null_count:
        return None
    if pd.api.types.is_integer_dtype(numbers.dtype) and numbers.dtype != object:
        try:
            return numbers.astype("Int64").array
        except (OverflowError, TypeError, ValueError):
            pass
    values = numbers.astype("Float64")
    return _finite(values.to_numpy(dtype=float, na_value=np.nan))


def _large_string() -> Any:
    import pyarrow as pa

    return pa.large_string()


def text_column(column: Any, *, clean: bool = False, stripped: bool = False) -> pd.api.extensions.ExtensionArray:
    """One column of text as numbers (Int64, Float64) or stripped text (string), with missing values.

    ``stripped``: the text was stripped piece by piece as it was read (see :func:`_read_pieces`).
    """
    import pyarrow as pa

    if isinstance(column, pd.api.extensions.ExtensionArray):
        return column  # read as numbers already
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = column.cast(pa.large_string())  # pyarrow guessed a type: back to the text
        clean, stripped = True, False
    if clean or (not stripped and _needs_trim(column)):
        column = _clean_text(column)
    found = _numbers(column)
    if found is None:
        found = _numbers_like_pandas(column)
    if found is not None:
        return found
    if not pa.types.is_large_string(column.type):
        column = column.cast(pa.large_string())
    return pd.arrays.ArrowStringArray(column)


def _frame(names: list[str], columns: list[Any], *, clean: bool, stripped: bool = False) -> pd.DataFrame:
    """Convert the columns (in threads: pyarrow and numpy release the GIL), freeing each text as it goes."""
    def convert(i: int) -> pd.api.extensions.ExtensionArray:
        column, columns[i] = columns[i], None
        return text_column(column, clean=clean, stripped=stripped)

    # Text stripped as it was read needs only a glance per column: no threads for that.
    workers = 1 if stripped else max(1, min(len(columns), os.cpu_count() or 1, 8))
    if workers == 1:
        arrays = [convert(i) for i in range(len(columns))]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="luskin-csv") as pool:
            arrays = list(pool.map(convert, range(len(columns))))
    return pd.DataFrame(dict(zip(clean_names(names), arrays)), copy=False)


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Strip blanks around text, turn blank text into missing, and make numeric text numeric.

    The same rules as :func:`load_csv`: names stripped and told apart, missing markers,
    numbers when every present value is one, infinities as missing.
    """
    names = clean_names(frame.columns)
    out = {}
    for name, (_, series) in zip(names, frame.items()):
        if pd.api.types.is_bool_dtype(series):
            out[name] = series.array
        elif pd.api.types.is_numeric_dtype(series):
            numbers = series.array
            if pd.api.types.is_float_dtype(series) and not np.isfinite(series.dropna().to_numpy(dtype=float)).all():
                numbers = _finite(series.to_numpy(dtype=float, na_value=np.nan))
            out[name] = numbers
        else:
            out[name] = text_column(_chunked(_as_arrow(series)), clean=True)
    return pd.DataFrame(out, index=frame.index)


def _chunked(array: Any) -> Any:
    import pyarrow as pa

    return array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])


def load_csv(source: str | os.PathLike[str] | bytes | IO[bytes], *, max_bytes: int = MAX_BYTES) -> pd.DataFrame:
    """Read a CSV with a header row: comma, semicolon, tab or pipe; UTF-8, UTF-16 or Latin-1; gzip allowed.

    Refuses what cannot be read (empty, not a table, not text, too big, a device or a pipe)
    with a sentence that says what is wrong.
    """
    return _check_frame(_load(CsvBytes(source, max_bytes)))


def _load(source: CsvBytes) -> pd.DataFrame:
    layout = read_layout(source)
    if layout.names is not None:
        check_width(len(layout.names))
        if len(layout.names) < 2:
            raise LuskinError(ONE_COLUMN)
    read = None if layout.quote_after_space else _read_arrow(source, layout)
    if read is not None:
        names, columns, stripped = read
        return _frame(names, columns, clean=False, stripped=stripped)
    return _frame(*_read_pandas(source, layout), clean=True)


ONE_COLUMN = ("Only one column was found. A usable file needs a header row and at least two columns "
               "(an outcome and a protected attribute), separated by commas, semicolons or tabs.")


def _check_frame(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.shape[1] < 2:
        raise LuskinError(ONE_COLUMN)
    if len(frame) == 0:
        raise LuskinError("The file has a header row but no data rows.")
    if all(_all_missing(frame[name].array) for name in frame.columns):
        raise LuskinError("Every cell of the file is empty: there is nothing to audit.")
    return frame


def _all_missing(array: Any) -> bool:
    """Whether every value is missing (for text, from pyarrow's count: nothing allocated)."""
    if isinstance(array, pd.arrays.ArrowStringArray):
        return bool(array.__arrow_array__().null_count == len(array))
    return bool(array.isna().all())
