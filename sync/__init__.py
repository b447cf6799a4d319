"""sync: the GitOps side of kapi (git sources, Syncs, reconcilers)."""
