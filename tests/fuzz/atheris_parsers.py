"""Coverage-guided fuzzing (atheris, libFuzzer) of the request-body parsers, as
the server calls them: JSON, YAML and Kubernetes protobuf bodies through the
DRF parsers of ``kapi.api``. A body may be refused only the way a client sees
as a 4xx (``ParseError``, a ``StatusError`` below 500); any other exception is
a finding, and libFuzzer stops with a non-zero exit and the crashing input.

Run as a script (libFuzzer owns the process and exits when done):
``python tests/fuzz/atheris_parsers.py json|yaml|protobuf -runs=N -seed=S [corpus]``.
``tests/fuzz/test_atheris_parsers.py`` runs it with a fixed seed and run count
and a seed corpus of valid bodies.
"""

from __future__ import annotations

import io
import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")

# Instrumented: the parsers and what they call (the patch decoders and
# kapi.errors, which Django's start would import first), not the rest of
# kapi that Django's start imports (that cost 15 s of CPU per run).
with atheris.instrument_imports(include=["kapi.patch", "kapi.errors"]):
    import kapi.errors
    import kapi.patch  # noqa: F401
import django  # noqa: E402

django.setup()
with atheris.instrument_imports(include=["kapi"]):
    from rest_framework.exceptions import ParseError

    from kapi.api.parsers import JSONParser, YAMLParser
    from kapi.api.protobuf_parser import ProtobufParser
    from kapi.errors import StatusError

PARSERS = {"json": JSONParser, "yaml": YAMLParser, "protobuf": ProtobufParser}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def protobuf_configmap() -> bytes:
    """``k8s\\0`` + runtime.Unknown{TypeMeta{v1, ConfigMap}, raw ConfigMap}."""
    meta = _field(1, b"cm") + _field(3, b"default") + _field(11, _field(1, b"app") + _field(2, b"web"))
    data = _field(2, _field(1, b"key") + _field(2, b"value"))
    configmap = _field(1, meta) + data
    type_meta = _field(1, b"v1") + _field(2, b"ConfigMap")
    return b"k8s\x00" + _field(1, type_meta) + _field(2, configmap)


SEEDS = {
    "json": [b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},'
             b'"data":{"k":"v"}}', b'[{"op":"add","path":"/a","value":1}]'],
    "yaml": [b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
             b"a: &x [1, 2]\nb: *x\nc: !!binary aGk=\n"],
    "protobuf": [protobuf_configmap()],
}


def main() -> None:
    kind = sys.argv.pop(1)
    parser = PARSERS[kind]()

    def one_input(data: bytes) -> None:
        try:
            parser.parse(io.BytesIO(data))
        except ParseError:
            pass
        except StatusError as exc:
            if exc.code >= 500:
                raise

    if len(sys.argv) > 1 and sys.argv[-1] == "--write-seeds":
        sys.argv.pop()
        corpus = sys.argv.pop()
        os.makedirs(corpus, exist_ok=True)
        for i, seed in enumerate(SEEDS[kind]):
            with open(os.path.join(corpus, f"seed-{i}"), "wb") as out:
                out.write(seed)
        return
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
