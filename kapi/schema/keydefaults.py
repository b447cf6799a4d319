"""Defaults of the list-map key fields of built-in types.

kube publishes these as ``default:`` in its OpenAPI (the ``+default`` markers in
``k8s.io/api``); the kubernetes-validate copy of the definitions drops them.
structured-merge-diff reads them to key a list item that omits a defaulted key
(``ports: [{port: 80}]`` is the item ``[port=80,protocol="TCP"]``), which is how
server-side apply merges such an item into the stored, defaulted one.

Data only: ``kapi.schema.builtin`` puts each value into its definition.
"""

from __future__ import annotations

__all__ = ["KEY_DEFAULTS"]

#: definition name -> property -> default
KEY_DEFAULTS: dict[str, dict[str, str]] = {
    # Container.ports / EphemeralContainer.ports: keys containerPort, protocol
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    # ServiceSpec.ports: keys port, protocol
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
}
