"""What kapi knows about particular kinds; the generic registry knows none.

``builtin`` declares kube's built-in kinds (one ``_kind`` call each) with the
strategy of each, one module per kind or family (``workloads``, ``networking``,
``namespaces``, ``secrets``, ...); ``schema`` wraps them with the published
definitions, ``defaulters`` holds kube's defaulting. ``virtual`` declares the
reviews that are answered, never stored. ``custom`` serves custom resources
from CustomResourceDefinitions (``customresourcedefinitions`` is the CRD's own
strategy, ``crdnames`` the naming decision, ``crdcleanup`` its finalizer),
``scale`` the ``/scale`` subresource, ``hpav1``/``hpaconversion`` the two
HorizontalPodAutoscaler versions.

The registry is handed these through settings (``KAPI_RESOURCE_TYPE_PROVIDERS``,
``KAPI_CUSTOM_RESOURCE_TYPES``; ``kapi.registry.catalog``) and never imports
this package: kinds build on the registry, not the other way round.
"""
