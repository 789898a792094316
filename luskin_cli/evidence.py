"""``luskin audit ... --evidence FILE``: the audit's evidence, one file anyone can check with ``luskin verify``.

The options (:func:`add_evidence_options`) are checked before any counting (the file's folder, the signing key);
:func:`write_for` writes the file once the audit has counted. A plain audit and ``--template ll144`` (of rows, or
of a published table with ``--counts``) write evidence; the others say they do not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from luskin_cli.options import CommandOptions, given
from luskin_core.errors import LuskinError
from luskin_core.spec.dataref import DataRef


def add_evidence_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("evidence (luskin verify checks it)")
    group.add_argument("--evidence", metavar="FILE",
                       help="write the audit's evidence here: specification, judgement, count table, every result, "
                            "the report (HTML and PDF), the data's fingerprint, versions, when and by whom, a manifest "
                            "of hashes")
    group.add_argument("--sign-key", metavar="KEY", help="sign the evidence with this Ed25519 private key (PEM; "
                                                         "`luskin keygen` makes one); publish its .pub beside the audit")
    group.add_argument("--evidence-without-pdf", action="store_true",
                       help="leave the report's PDF out of the evidence (it takes seconds and Chromium)")
    group.add_argument("--by", metavar="NAME", help="who ran the audit, as the evidence records it (default: the "
                                                    "user running the command)")
    group.add_argument("--distribution-date", metavar="DATE",
                       help="Local Law 144: the date the employer began using the tool (for the public summary)")
    group.add_argument("--data-explanation", metavar="TEXT",
                       help="Local Law 144: the source and an explanation of the data (for the public summary)")
    group.add_argument("--browser", dest="evidence_browser", metavar="PATH",
                       help="the Chromium that draws the PDF report's charts (default: chromium on the PATH)")


def check_options(args: CommandOptions) -> Any:
    """The evidence's target and signing key checked before the work starts; the loaded key (or None)."""
    if not args.evidence:
        for flag, value in (("--sign-key", args.sign_key), ("--distribution-date", args.distribution_date),
                            ("--data-explanation", args.data_explanation), ("--by", args.by)):
            if value:
                raise LuskinError(f"{flag} goes with --evidence FILE: say where to write the evidence.")
        return None
    target = Path(args.evidence)
    if target.is_dir():
        raise LuskinError(f"'{args.evidence}' is a folder: give a file name for the evidence, e.g. "
                          f"{target / 'audit.evidence'}.")
    if not target.parent.exists():
        raise LuskinError(f"Cannot write the evidence to '{args.evidence}': the folder '{target.parent}' does not "
                          "exist.")
    if args.sign_key:
        from luskin_core.evidence.signing import load_private

        return load_private(args.sign_key)
    return None


def refuse(what: str) -> None:
    raise LuskinError(f"--evidence is written for a plain audit and for --template ll144; {what} writes none yet.")


def data_facts(args: CommandOptions, located: Any) -> Any:
    """What the evidence says of the data: its name (never a password), the engine that counted it, its bytes."""
    from luskin_core.counting.engines import engine_for
    from luskin_core.evidence.make import DataFacts

    location = args.data or str(DataRef.sample(str(args.preset)))
    ref = DataRef.parse(location)
    if ref.is_sample:
        return DataFacts(str(DataRef.sample(ref.name.lower())), "memory", location)
    name = getattr(located, "name", None)
    engine = getattr(located, "kind", None) or "memory"
    found = engine_for(location)
    if found.is_address:
        return DataFacts(str(DataRef.source(name or found.title)), engine, location)
    return DataFacts(str(DataRef.upload(Path(location).name)), engine, location)


def write_for(args: CommandOptions, key: Any, kind: str, specification: dict[str, Any], counts: dict[str, Any],
              facts: Any) -> Any:
    """Write the evidence file and say so on stderr (its SHA-256, the key that signed it)."""
    import getpass

    from luskin_core.evidence.make import make_evidence

    by = args.by
    if by is None:
        try:
            by = getpass.getuser()
        except (KeyError, OSError):  # no user name for this process
            by = None
    about = {"distribution_date": args.distribution_date, "data_explanation": args.data_explanation}
    made = make_evidence(kind, specification, counts, data=facts, about=about, by=by, made_with="luskin audit",
                         signing_key=key, pdf=not args.evidence_without_pdf,
                         browser_path=args.evidence_browser)
    try:
        Path(given(args.evidence, "--evidence")).write_bytes(made.data)
    except OSError as err:
        raise LuskinError(f"Cannot write the evidence to '{args.evidence}': {err.strerror or err}.") from None
    signed = f", signed with key {made.key_id[:16]}" if made.key_id else ", not signed"
    print(f"Evidence written to {args.evidence} ({len(made.data) / 1e6:.1f} MB, SHA-256 {made.sha256}{signed}); "
          f"check it with: luskin verify {args.evidence}", file=sys.stderr)
    return made


__all__ = ["add_evidence_options", "check_options", "data_facts", "refuse", "write_for"]
