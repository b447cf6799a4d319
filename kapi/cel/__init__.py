"""CEL for ``x-kubernetes-validations``: kube's extension libraries
(``library``), a parser for static checks (``parser``), the cost estimate
(``cost``) and rule evaluation with kube's messages (``rules``)."""
