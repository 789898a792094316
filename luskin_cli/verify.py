"""``luskin verify FILE``: check an audit's evidence; ``luskin keygen FILE``: a key pair to sign it with.

``luskin verify`` checks the manifest and the signature (``--key PUBLIC.pem``: by that key), recomputes every
number from the bundled count table and compares it with the bundled results, and with ``--data`` (any source
``luskin audit`` reads: a CSV, a Parquet file or folder, a DuckDB file, ``postgresql://...``, ``spark:``, with
``--table``) counts the data again with the evidence's specification and compares the counts and the bytes read.
Exit status 0 only when everything agrees, 1 when the evidence does not check out (each thing wrong said in one
line), 2 for a mistake in the command. For Local Law 144 evidence that checks out, ``--summary-html`` and
``--summary-csv`` write the public summary (made from the recomputed tables, not from the file's JSON).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from luskin_cli.options import CommandOptions, given
from luskin_core.errors import LuskinError
from luskin_core.spec.dataref import DataRef

EXIT_NOT_VERIFIED = 1


def add_parsers(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify", help="check an audit's evidence: hashes, signature, every number, and (with --data) the data",
        description="Check an evidence file written by luskin audit --evidence (or the dashboard's Report page): its "
                    "manifest of hashes, its signature, every number recomputed from its count table and, with "
                    "--data, the data counted again. Exit status 0 when everything agrees, 1 when something does "
                    "not (each said in one line).")
    parser.add_argument("file", metavar="FILE", help="the evidence file")
    parser.add_argument("--key", metavar="PUBLIC", help="the operator's public key (PEM): the evidence must be signed "
                                                        "with it")
    parser.add_argument("--data", help="the audited data, counted again: a CSV, Parquet, a DuckDB file, "
                                       "postgresql://user@host/db or spark: (with --table); for a published LL144 "
                                       "table, its CSV")
    parser.add_argument("--table", default=None, metavar="NAME", help="the table, when --data is a database")
    parser.add_argument("--json", action="store_true", help="print the answer as one JSON document")
    parser.add_argument("--summary-html", metavar="PATH", help="Local Law 144: write the public summary page here "
                                                               "(only when the evidence checks out)")
    parser.add_argument("--summary-csv", metavar="PATH", help="Local Law 144: write the summary's CSV here (the one "
                                                              "--counts reads back)")
    parser.set_defaults(run=run)
    keys = subparsers.add_parser("keygen", help="make an Ed25519 key pair to sign evidence with",
                                 description="Write a new Ed25519 private key to FILE (readable by you only) and its "
                                             "public key to FILE.pub: sign with luskin audit --evidence E --sign-key "
                                             "FILE, and publish FILE.pub beside the audit.")
    keys.add_argument("file", metavar="FILE", help="where to write the private key")
    keys.set_defaults(run=run_keygen)


def run_keygen(args: CommandOptions) -> int:
    from luskin_core.evidence.signing import new_key

    private, public, key_id = new_key(given(args.file, "FILE"))
    print(f"Private key: {private} (keep it; readable by you only)\nPublic key: {public} (publish it)\n"
          f"Key id: {key_id}")
    return 0


def _recount(args: CommandOptions, kind: str) -> Any:
    """The data to count again, as the evidence's kind counts it."""
    from luskin_core.evidence.fingerprint import data_bytes
    from luskin_core.evidence.verify import Recount

    location = str(args.data).strip()
    if kind == "ll144_published":
        try:
            raw = Path(location).read_bytes()
        except OSError as err:
            raise LuskinError(f"Could not read the published table '{location}': {err.strerror or err}.") from None
        return Recount(raw, Path(location).name, "published table", data_bytes(location))
    from luskin_cli.engine import is_engine_location, open_for_args

    if is_engine_location(location, args.table):
        source = open_for_args(args, location)
        return Recount(source, source.name, source.kind, data_bytes(location))
    from luskin_core.counting.data import load_data

    frame = load_data(location)
    return Recount(frame, location if DataRef.parse(location).is_sample else Path(location).name, "memory",
                   data_bytes(location))


def run(args: CommandOptions) -> int:
    from luskin_core.evidence import bundle
    from luskin_core.evidence.verify import verify

    path = Path(given(args.file, "FILE"))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LuskinError(f"There is no file '{args.file}'.") from None
    except IsADirectoryError:
        raise LuskinError(f"'{args.file}' is a folder: give the evidence file.") from None
    except OSError as err:
        raise LuskinError(f"Could not read '{args.file}': {err.strerror or err}.") from None
    public = None
    if args.key:
        from luskin_core.evidence.signing import read_public

        public = read_public(args.key)
    for target in (args.summary_html, args.summary_csv):
        if target and (Path(target).is_dir() or not Path(target).parent.exists()):
            raise LuskinError(f"Cannot write '{target}': give a file in a folder that exists.")
    recount = None
    if args.data:
        try:
            kind = bundle.read(data).kind
        except LuskinError:
            kind = ""
        if kind:
            recount = _recount(args, kind)
    answer = verify(data, public_key=public, recount=recount)
    written = []
    if answer.ok and (args.summary_html or args.summary_csv):
        written = _summary(args, answer, path.name)
    elif args.summary_html or args.summary_csv:
        print("luskin: no public summary was written: the evidence does not check out.", file=sys.stderr)
    if args.json:
        print(json.dumps({**answer.to_dict(), "written": written}, indent=2))
    else:
        print(answer.text(path.name))
        for line in written:
            print(f"Wrote {line}")
    return 0 if answer.ok else EXIT_NOT_VERIFIED


def _summary(args: CommandOptions, answer: Any, name: str) -> list[str]:
    if answer.kind not in ("ll144", "ll144_published"):
        raise LuskinError("The public summary is made for Local Law 144 evidence (luskin audit --template ll144 "
                          "--evidence FILE); this evidence is of a plain audit.")
    from luskin_core.evidence.ll144_public import summary_csv, summary_html

    result = answer.result.result
    written = []
    if args.summary_html:
        page = summary_html(result, about=answer.about, made=answer.made, evidence_name=name,
                            evidence_sha256=answer.sha256, key_id=answer.key_id)
        _write(args.summary_html, page)
        written.append(str(args.summary_html))
    if args.summary_csv:
        _write(args.summary_csv, summary_csv(result))
        written.append(str(args.summary_csv))
    return written


def _write(target: str, text: str) -> None:
    try:
        Path(target).write_text(text, encoding="utf-8")
    except OSError as err:
        raise LuskinError(f"Could not write '{target}': {err.strerror or err}.") from None


__all__ = ["add_parsers", "run", "run_keygen"]
