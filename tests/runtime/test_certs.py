"""The CA and serving certificate: chain, SANs, reuse and reissue, key modes."""

from __future__ import annotations

import datetime
import ipaddress
import stat
from pathlib import Path

from cryptography import x509

from kapi.runtime import certs


def _load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _sans(cert: x509.Certificate) -> tuple[set[str], set[str]]:
    ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    dns = set(ext.get_values_for_type(x509.DNSName))
    ips = {str(ip) for ip in ext.get_values_for_type(x509.IPAddress)}
    return dns, ips


def test_serving_cert_chains_to_ca(tmp_path: Path) -> None:
    """The serving certificate is signed by the CA and is a TLS server cert."""
    files = certs.ensure_tls(tmp_path, "127.0.0.1")
    ca, cert = _load(files.ca_cert), _load(files.cert)
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert x509.oid.ExtendedKeyUsageOID.SERVER_AUTH in eku


def test_serving_cert_verifies_with_openssl_stack(tmp_path: Path) -> None:
    """Python's ssl accepts the pair and verifies the chain for 127.0.0.1."""
    import socket
    import ssl
    import threading

    files = certs.ensure_tls(tmp_path, "127.0.0.1")
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(files.cert, files.key)
    client_ctx = ssl.create_default_context(cafile=str(files.ca_cert))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        def serve() -> None:
            conn, _ = listener.accept()
            with server_ctx.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)

        thread = threading.Thread(target=serve)
        thread.start()
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with client_ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                tls.sendall(b"x")
        thread.join(5)


def test_sans_cover_loopback_and_bind_host(tmp_path: Path) -> None:
    """localhost, 127.0.0.1, ::1 and the bind host are all in the certificate."""
    files = certs.ensure_tls(tmp_path, "10.1.2.3", ["kapi.example.com"])
    dns, ips = _sans(_load(files.cert))
    assert {"localhost", "kapi.example.com"} <= dns
    assert {"127.0.0.1", "::1", "10.1.2.3"} <= ips


def test_wildcard_bind_adds_hostname(tmp_path: Path) -> None:
    import socket

    files = certs.ensure_tls(tmp_path, "0.0.0.0")
    dns, ips = _sans(_load(files.cert))
    assert socket.gethostname() in dns | ips
    assert "0.0.0.0" not in ips


def test_certs_are_reused_and_reissued_only_when_needed(tmp_path: Path) -> None:
    """Same bind host: nothing changes. New host: new serving cert, same CA."""
    files = certs.ensure_tls(tmp_path, "127.0.0.1")
    ca_pem, cert_pem = files.ca_cert.read_bytes(), files.cert.read_bytes()
    certs.ensure_tls(tmp_path, "localhost")
    assert files.cert.read_bytes() == cert_pem
    certs.ensure_tls(tmp_path, "192.0.2.7")
    assert files.ca_cert.read_bytes() == ca_pem
    assert files.cert.read_bytes() != cert_pem
    _load(files.cert).verify_directly_issued_by(_load(files.ca_cert))
    assert ipaddress.ip_address("192.0.2.7") in _load(
        files.cert
    ).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    ).value.get_values_for_type(x509.IPAddress)


def test_expiring_serving_cert_is_renewed(tmp_path: Path) -> None:
    files = certs.ensure_tls(tmp_path, "127.0.0.1")
    old = files.cert.read_bytes()
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=300)
    certs.ensure_tls(tmp_path, "127.0.0.1", now=later)
    assert files.cert.read_bytes() != old


def test_keys_are_private(tmp_path: Path) -> None:
    """Private keys are 0600; certificates are world-readable."""
    files = certs.ensure_tls(tmp_path, "127.0.0.1")
    assert stat.S_IMODE(files.ca_key.stat().st_mode) == 0o600
    assert stat.S_IMODE(files.key.stat().st_mode) == 0o600
    assert stat.S_IMODE(files.ca_cert.stat().st_mode) == 0o644
