"""Ed25519 signatures of the evidence (through ``cryptography``): a key pair, a signature, its check.

The operator keeps the private key (PEM, PKCS#8, written 0600) and publishes the public key beside the audit;
a key is named by its *key id*, the SHA-256 of its 32 raw public bytes (the first 16 hexadecimal digits are
printed). What is signed is the manifest's canonical bytes, which hold the SHA-256 of every other part.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError

ALGORITHM = "Ed25519"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - a dependency of the package
        raise LuskinError("Signing and checking signatures needs the package 'cryptography' (pip install "
                          "cryptography).") from None
    return serialization, ed25519


def new_key(path: str | os.PathLike[str]) -> tuple[Path, Path, str]:
    """Write a new private key to ``path`` (mode 0600, refused if it exists) and its public key to ``path.pub``;
    returns both paths and the key id."""
    serialization, ed25519 = _crypto()
    private_path = Path(path)
    public_path = private_path.with_name(private_path.name + ".pub")
    for target in (private_path, public_path):
        if target.exists():
            raise LuskinError(f"'{target}' exists: choose another name (a key is never overwritten).")
    if not private_path.parent.is_dir():
        raise LuskinError(f"The folder '{private_path.parent}' does not exist.")
    key = ed25519.Ed25519PrivateKey.generate()
    secret = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())
    try:
        handle = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(secret)
        public_path.write_bytes(public_pem(key))
    except OSError as err:
        raise LuskinError(f"Could not write the key: {err.strerror or err}.") from None
    return private_path, public_path, key_id(public_pem(key))


def load_private(path: str | os.PathLike[str]) -> Any:
    """The Ed25519 private key in a PEM file, or a plain refusal."""
    serialization, ed25519 = _crypto()
    data = _read(path, "signing key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise LuskinError(f"'{path}' is not a private key Luskin can sign with (an unencrypted Ed25519 key in PEM, "
                          "as `luskin keygen` writes).") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise LuskinError(f"'{path}' holds another kind of key: the evidence is signed with Ed25519 keys "
                          "(`luskin keygen` makes one).")
    return key


def public_pem(private_key: Any) -> bytes:
    serialization, _ = _crypto()
    return bytes(private_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo))


def _public(data: bytes, what: str) -> Any:
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise LuskinError(f"{what} is not a public key (PEM).") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise LuskinError(f"{what} is not an Ed25519 public key.")
    return key


def read_public(path: str | os.PathLike[str]) -> bytes:
    """A public key file's bytes, checked to be an Ed25519 public key (PEM)."""
    data = _read(path, "public key")
    _public(data, f"'{path}'")
    return data


def key_id(public: bytes) -> str:
    """The key's id: SHA-256 of its raw public bytes, in hexadecimal."""
    import hashlib

    serialization, _ = _crypto()
    raw = _public(public, "The key").public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def sign(private_key: Any, message: bytes) -> dict[str, str]:
    """The signature record stored beside the manifest."""
    public = public_pem(private_key)
    return {"algorithm": ALGORITHM, "public_key": public.decode("ascii"), "key_id": key_id(public),
            "signature": base64.b64encode(private_key.sign(message)).decode("ascii")}


def check(record: Any, message: bytes) -> str | None:
    """None when ``record`` is a valid Ed25519 signature of ``message`` by the key it names, else why not."""
    from cryptography.exceptions import InvalidSignature

    if not isinstance(record, dict) or record.get("algorithm") != ALGORITHM:
        return "the signature is not an Ed25519 signature Luskin wrote"
    try:
        public = str(record["public_key"]).encode("ascii")
        signature = base64.b64decode(str(record["signature"]), validate=True)
        key = _public(public, "The signature's public key")
    except (KeyError, ValueError, LuskinError, UnicodeEncodeError):
        return "the signature record is damaged (its key or its signature cannot be read)"
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return "the signature does not match the manifest: the manifest or the signature was changed after signing"
    if record.get("key_id") != key_id(public):
        return "the signature names a key id that is not its key's"
    return None


def _read(path: str | os.PathLike[str], what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise LuskinError(f"There is no {what} file '{path}'.") from None
    except OSError as err:
        raise LuskinError(f"Could not read the {what} '{path}': {err.strerror or err}.") from None


__all__ = ["ALGORITHM", "check", "key_id", "load_private", "new_key", "public_pem", "read_public", "sign"]
