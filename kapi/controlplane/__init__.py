"""What kube-apiserver and kube-controller-manager make by themselves, with no
client asking: the ``default/kubernetes`` Service with its Endpoints and
EndpointSlice (kube-apiserver's bootstrap controller and endpoint reconciler,
``kubernetesservice``), and the ``kube-root-ca.crt`` ConfigMap in every
namespace (kube-controller-manager's root-CA publisher, ``rootca``).

Both run on the one controller runtime (``kapi.controllers``): ``watch`` says
which changes map to which keys, ``controllers`` what reconciling a key does,
``wakeup`` which writes wake the feed.
"""
