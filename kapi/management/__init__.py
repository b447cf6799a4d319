"""kapi's management commands (serve, kubeconfig)."""
