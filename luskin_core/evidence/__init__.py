"""Audit evidence anyone can verify: one file holding the specification, the resolved judgement, the count table,
every result, the report, the data's fingerprint, the versions, when and by whom, a manifest of hashes and an
Ed25519 signature (:mod:`~luskin_core.evidence.bundle`); made by :func:`~luskin_core.evidence.make.make_evidence`,
checked by :func:`~luskin_core.evidence.verify.verify` (every number recomputed from the counts; with the data,
recounted on any engine), and for Local Law 144 the public summary made from it
(:mod:`~luskin_core.evidence.ll144_public`). The layer above ``present``: it reads analyses and reports.
"""
