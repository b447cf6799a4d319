"""The TLS material ``serve`` generates on first start, the way k3s does.

Under ``<data dir>/tls``:

* ``ca.crt`` / ``ca.key``: a self-signed CA (ECDSA P-256, ten years), created once
  and kept, so kubeconfigs handed out earlier stay valid across restarts.
* ``serving.crt`` / ``serving.key``: the API server's certificate, signed by that
  CA, with SANs ``localhost``, ``127.0.0.1``, ``::1``, the bind host and any extra
  names. It is reissued when a required SAN is missing, when it expires within
  90 days, or when it was not signed by the current CA.

Private keys are written 0600, atomically (temporary file, then rename).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "TLSFiles",
    "ensure_tls",
    "required_sans",
    "tls_dir",
    "tls_files",
]

CA_VALIDITY = datetime.timedelta(days=3650)
SERVING_VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=90)
# Wildcard bind addresses are not names a client can connect to.
_WILDCARDS = {"", "0.0.0.0", "::", "*"}

SAN = x509.DNSName | x509.IPAddress


@dataclass(frozen=True)
class TLSFiles:
    """Paths of the CA and serving certificate and keys."""

    ca_cert: Path
    ca_key: Path
    cert: Path
    key: Path


def tls_dir(data_dir: Path) -> Path:
    return data_dir / "tls"


def tls_files(data_dir: Path) -> TLSFiles:
    """Where the files live (whether or not they exist yet)."""
    d = tls_dir(data_dir)
    return TLSFiles(d / "ca.crt", d / "ca.key", d / "serving.crt", d / "serving.key")


def required_sans(bind_host: str = "", extra: Iterable[str] = ()) -> list[SAN]:
    """The SANs the serving certificate must carry for ``bind_host``.

    For a wildcard bind the machine's host name is added, so that clients on
    other machines have at least one name that verifies.
    """
    names = ["localhost", "127.0.0.1", "::1"]
    host = bind_host.strip("[]")
    if host in _WILDCARDS:
        host = socket.gethostname()
    names.append(host)
    names.extend(extra)
    sans: list[SAN] = []
    for name in names:
        san = _san(name)
        if san not in sans:
            sans.append(san)
    return sans


def ensure_tls(
    data_dir: Path,
    bind_host: str = "",
    extra_sans: Iterable[str] = (),
    *,
    now: datetime.datetime | None = None,
) -> TLSFiles:
    """Create the CA if missing and (re)issue the serving certificate if needed."""
    now = now or datetime.datetime.now(datetime.UTC)
    files = tls_files(data_dir)
    files.ca_cert.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    ca_cert, ca_key = _ensure_ca(files, now)
    sans = required_sans(bind_host, extra_sans)
    if not _serving_cert_ok(files, ca_cert, sans, now):
        _issue_serving_cert(files, ca_cert, ca_key, sans, now)
    return files


def _key_usage(**allowed: bool) -> x509.KeyUsage:
    """A KeyUsage with the named usages on and every other one off."""
    usages = dict.fromkeys(
        (
            "digital_signature",
            "content_commitment",
            "key_encipherment",
            "data_encipherment",
            "key_agreement",
            "key_cert_sign",
            "crl_sign",
            "encipher_only",
            "decipher_only",
        ),
        False,
    )
    usages.update(allowed)
    return x509.KeyUsage(**usages)


def _ensure_ca(
    files: TLSFiles, now: datetime.datetime
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    if files.ca_cert.exists() and files.ca_key.exists():
        cert = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
        key = serialization.load_pem_private_key(files.ca_key.read_bytes(), None)
        return cert, key  # type: ignore[return-value]
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"kapi-ca@{int(now.timestamp())}")]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            _key_usage(digital_signature=True, key_cert_sign=True, crl_sign=True),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    # Key first: a CA certificate without its key would be unusable.
    _write_key(files.ca_key, key)
    _write_atomic(files.ca_cert, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert, key


def _serving_cert_ok(
    files: TLSFiles,
    ca_cert: x509.Certificate,
    sans: list[SAN],
    now: datetime.datetime,
) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
        serialization.load_pem_private_key(files.key.read_bytes(), None)
    except (OSError, ValueError):
        return False
    if cert.not_valid_after_utc - RENEW_BEFORE < now:
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    try:
        present = cert.extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        ).value
    except x509.ExtensionNotFound:
        return False
    return all(san in present for san in sans)


def _issue_serving_cert(
    files: TLSFiles,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    sans: list[SAN],
    now: datetime.datetime,
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kapi")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + SERVING_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            _key_usage(digital_signature=True, key_encipherment=True),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_key(files.key, key)
    _write_atomic(files.cert, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _san(name: str) -> SAN:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _write_atomic(path, pem, 0o600)


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    # The mode is set at creation so a key is never readable by others, even briefly.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
