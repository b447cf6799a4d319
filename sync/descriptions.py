"""What ``kubectl explain`` says about the ``sync.kapi.dev`` kinds: a
description for every field of GitRepository, Sync, Provider and Alert, worded
as Flux's CRDs word their counterparts (``source.toolkit.fluxcd.io``
GitRepository, ``kustomize.toolkit.fluxcd.io`` Kustomization,
``notification.toolkit.fluxcd.io`` Provider and Alert), where kapi differs in
kapi's terms.

:func:`described` returns a copy of a kind's OpenAPI v3 schema with the
descriptions filled in (paths are dotted field names; an array's item fields
continue its path). ``tests/sync/test_explain.py`` fails when a field has none.
"""

from __future__ import annotations

import copy

__all__ = ["DESCRIPTIONS", "described"]

_API_VERSION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer "
    "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
_METADATA = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_COMMON = {"apiVersion": _API_VERSION, "kind": _KIND, "metadata": _METADATA}
_CONDITIONS = "Conditions holds the conditions for the {kind}: Ready, Reconciling and Stalled, as Flux's."
_OBSERVED = "ObservedGeneration is the last observed generation of the {kind} object."
_HANDLED = (
    "LastHandledReconcileAt holds the value of the most recent reconcile request value, so a change of "
    "the annotation value can be detected (the sync.kapi.dev/requestedAt annotation, as Flux's "
    "reconcile.fluxcd.io/requestedAt)."
)
_SUSPEND = "This flag tells the controller to suspend subsequent {what} operations; it does not apply to already started operations. Defaults to false."

DESCRIPTIONS: dict[str, dict[str, str]] = {
    "GitRepository": {
        "": "GitRepository is the Schema for the gitrepositories API: a Git repository, either hosted by "
            "kapi itself (no spec.url: push to https://<kapi>/git/<namespace>/<name>.git) or mirrored "
            "from spec.url, whose revisions Syncs apply.",
        **_COMMON,
        "spec": "GitRepositorySpec specifies the Git repository to mirror (or, without a URL, the hosted "
                "one), the ref to follow and how often to fetch.",
        "spec.url": "URL specifies the Git repository URL to mirror; it can be an HTTP/S, SSH or file "
                    "address. Empty: the repository is hosted by kapi and receives pushes.",
        "spec.ref": "Reference specifies the Git reference to resolve and monitor for changes, defaults "
                    "to the 'main' branch.",
        "spec.ref.branch": "Branch to check out, defaults to 'main' if no other field is defined.",
        "spec.ref.tag": "Tag to check out, takes precedence over Branch.",
        "spec.ref.commit": "Commit SHA to check out, takes precedence over all reference fields.",
        "spec.interval": "Interval at which the GitRepository URL is checked for updates. This interval "
                         "is approximate and may be subject to jitter to ensure efficient use of resources.",
        "spec.timeout": "Timeout for Git operations like cloning, defaults to 60s.",
        "spec.secretRef": "SecretRef specifies the Secret containing authentication credentials for the "
                          "GitRepository. For HTTPS repositories the Secret must contain 'username' and "
                          "'password' fields, or a 'bearerToken'. For SSH repositories the Secret must "
                          "contain 'identity' and 'known_hosts' fields.",
        "spec.secretRef.name": "Name of the referent Secret, in the GitRepository's namespace.",
        "spec.webhookSecretRef": "WebhookSecretRef names the Secret whose 'token' authenticates the Git "
                                 "host's push webhook (/hooks/<namespace>/<name>), which triggers a fetch.",
        "spec.webhookSecretRef.name": "Name of the referent Secret, in the GitRepository's namespace.",
        "spec.ignore": "Ignore overrides the set of excluded patterns in the .sourceignore format (which "
                       "is the same as .gitignore). If not provided, a default will be used, consult the "
                       "documentation for your version to find out what those are.",
        "spec.validateOnPush": "ValidateOnPush: a push to a hosted repository is refused when the "
                               "Syncs following it could not render or validate the new revision. "
                               "Defaults to true.",
        "spec.suspend": _SUSPEND.format(what="fetch"),
        "status": "GitRepositoryStatus records the observed state of a Git repository.",
        "status.conditions": _CONDITIONS.format(kind="GitRepository"),
        "status.observedGeneration": _OBSERVED.format(kind="GitRepository"),
        "status.lastHandledReconcileAt": _HANDLED,
        "status.url": "URL is the address where the repository is served: the kapi git endpoint of a "
                      "hosted repository, or the mirrored URL.",
        "status.artifact": "Artifact represents the last successful GitRepository reconciliation: the "
                           "revision Syncs apply.",
        "status.artifact.revision": "Revision is a human-readable identifier traceable in the origin "
                                    "source system, as <branch>@sha1:<commit>.",
        "status.artifact.lastUpdateTime": "LastUpdateTime is the timestamp corresponding to the last "
                                          "update of the Artifact.",
        "status.artifact.message": "Message is the commit message of the revision.",
        "status.artifact.author": "Author is the author of the revision's commit, as 'name <email>'.",
    },
    "Sync": {
        "": "Sync is the Schema for the syncs API: it applies the manifests at a path of a "
            "GitRepository's revision to the cluster, prunes what the revision dropped and corrects "
            "drift, as Flux's Kustomization.",
        **_COMMON,
        "spec": "SyncSpec defines the configuration to calculate the desired state from a Source using "
                "Kustomize, and how to apply it.",
        "spec.sourceRef": "Reference of the source where the manifests are.",
        "spec.sourceRef.kind": "Kind of the referent: GitRepository.",
        "spec.sourceRef.name": "Name of the referent.",
        "spec.sourceRef.namespace": "Namespace of the referent; only the Sync's own namespace is "
                                    "accepted (cross-namespace references are refused).",
        "spec.path": "Path to the directory containing the kustomization.yaml file, or the set of plain "
                     "YAMLs a kustomization.yaml should be generated for. Defaults to 'None', which "
                     "translates to the root path of the SourceRef.",
        "spec.interval": "The interval at which to reconcile the Sync. This interval is approximate and "
                         "may be subject to jitter to ensure efficient use of resources.",
        "spec.retryInterval": "The interval at which to retry a previously failed reconciliation. When "
                              "not specified, the controller uses the SyncSpec.Interval value to retry "
                              "failures.",
        "spec.timeout": "Timeout for validation, apply and health checking operations. Defaults to "
                        "'Interval' duration.",
        "spec.prune": "Prune enables garbage collection: objects the revision no longer contains are "
                      "deleted. Defaults to true.",
        "spec.suspend": _SUSPEND.format(what="reconciliation"),
        "spec.force": "Force instructs the controller to recreate resources when patching fails due to "
                      "an immutable field change. Defaults to false.",
        "spec.wait": "Wait instructs the controller to check the health of all the reconciled resources "
                     "(kstatus) before the Sync is Ready. Defaults to false.",
        "spec.targetNamespace": "TargetNamespace sets or overrides the namespace in the kustomization.yaml "
                                "file.",
        "spec.serviceAccountName": "The name of the Kubernetes service account to impersonate when "
                                   "reconciling this Sync (default: the namespace's 'default').",
        "spec.dependsOn": "DependsOn may contain a meta.NamespacedObjectReference slice with references "
                          "to Sync resources that must be ready before this Sync can be reconciled.",
        "spec.dependsOn.name": "Name of the referent Sync, in the same namespace.",
        "spec.driftIgnoreRules": "DriftIgnoreRules is a list of rules for specifying which changes to "
                                 "ignore during drift detection: those fields are left to other managers.",
        "spec.driftIgnoreRules.paths": "Paths is a list of JSON Pointer (RFC 6901) paths to be excluded "
                                       "from consideration in a Kubernetes object.",
        "spec.driftIgnoreRules.target": "Target is a selector for specifying Kubernetes objects to which "
                                        "this rule applies. If Target is not set, the Paths will be ignored "
                                        "for all Kubernetes objects within the manifest of the Sync.",
        "spec.driftIgnoreRules.target.group": "Group is the API group to select resources from. Together "
                                              "with Version and Kind it is capable of unambiguously "
                                              "identifying and/or selecting resources.",
        "spec.driftIgnoreRules.target.version": "Version of the API Group to select resources from.",
        "spec.driftIgnoreRules.target.kind": "Kind of the API Group to select resources from.",
        "spec.driftIgnoreRules.target.name": "Name to match resources with.",
        "spec.driftIgnoreRules.target.namespace": "Namespace to select resources from.",
        "spec.driftIgnoreRules.target.labelSelector": "LabelSelector is a string that follows the label "
                                                      "selection expression: "
                                                      "https://kubernetes.io/docs/concepts/overview/"
                                                      "working-with-objects/labels/#api. It matches with "
                                                      "the resource labels.",
        "spec.driftIgnoreRules.target.annotationSelector": "AnnotationSelector is a string that follows "
                                                           "the label selection expression. It matches "
                                                           "with the resource annotations.",
        "spec.postBuild": "PostBuild describes which actions to perform on the YAML manifest generated by "
                          "building the kustomize overlay.",
        "spec.postBuild.substitute": "Substitute holds a map of key/value pairs. The variables defined in "
                                     "your YAML manifests that match any of the keys defined in the map "
                                     "will be substituted with the set value. Includes support for bash "
                                     "string replacement functions e.g. ${var:=default}, ${var:position} "
                                     "and ${var/substring/replacement}.",
        "spec.postBuild.substituteFrom": "SubstituteFrom holds references to ConfigMaps and Secrets "
                                         "containing the variables and their values to be substituted in "
                                         "the YAML manifests. The ConfigMap and the Secret data keys "
                                         "represent the var names, and they must match the vars declared "
                                         "in the manifests for the substitution to happen.",
        "spec.postBuild.substituteFrom.kind": "Kind of the values referent, valid values are ('Secret', "
                                              "'ConfigMap').",
        "spec.postBuild.substituteFrom.name": "Name of the values referent. Should reside in the same "
                                              "namespace as the referring resource.",
        "spec.postBuild.substituteFrom.optional": "Optional indicates whether the referenced resource "
                                                  "must exist, or whether to tolerate its absence. If "
                                                  "true and the referenced resource is absent, proceed as "
                                                  "if the resource was present but empty, without any "
                                                  "variables defined.",
        "spec.decryption": "Decrypt Kubernetes secrets before applying them on the cluster.",
        "spec.decryption.provider": "Provider is the name of the decryption engine: sops.",
        "spec.decryption.secretRef": "The secret name containing the private OpenPGP keys used for "
                                     "decryption (here: age keys, as '<name>.agekey' data keys).",
        "spec.decryption.secretRef.name": "Name of the referent Secret, in the Sync's namespace.",
        "spec.historyLimit": "HistoryLimit is how many revisions status.history keeps (1 to 50, "
                             "default 5): the revisions a rollback may pin.",
        "spec.kubeConfig": "The KubeConfig for reconciling the Sync on a remote cluster. When used in "
                           "combination with Sync.spec.serviceAccountName, forces the controller to act on "
                           "behalf of that Service Account at the target cluster (impersonation).",
        "spec.kubeConfig.secretRef": "SecretRef holds the name of a secret that contains a key with the "
                                     "kubeconfig file as the value. If no key is set, the key will default to "
                                     "'value'. It is recommended that the kubeconfig is self-contained, and the "
                                     "secret is regularly updated if credentials such as a cloud-access-token "
                                     "expire. Exec and auth-provider plugins, file paths and "
                                     "insecure-skip-tls-verify are refused.",
        "spec.kubeConfig.secretRef.name": "Name of the Secret, in the Sync's namespace.",
        "spec.kubeConfig.secretRef.key": "Key in the Secret, when not specified an implementation-specific "
                                         "default key is used ('value', then 'value.yaml').",
        "status.target": "Target is the Kubernetes API server the Sync applies to when spec.kubeConfig is set.",
        "status.target.server": "Server is the URL of the target's API server, from the kubeconfig.",
        "status.target.version": "Version is the target API server's gitVersion (its /version).",
        "status": "SyncStatus defines the observed state of a Sync.",
        "status.conditions": _CONDITIONS.format(kind="Sync"),
        "status.observedGeneration": _OBSERVED.format(kind="Sync"),
        "status.lastHandledReconcileAt": _HANDLED,
        "status.lastAppliedRevision": "The last successfully applied revision. Equals the Revision of the "
                                      "applied Artifact from the referenced Source.",
        "status.lastAttemptedRevision": "LastAttemptedRevision is the revision of the last "
                                        "reconciliation attempt.",
        "status.lastAppliedDigest": "LastAppliedDigest is the digest of the rendered manifests last "
                                    "applied.",
        "status.healthCheckDeadline": "HealthCheckDeadline is when the health checks of the current "
                                      "attempt (spec.wait) give up.",
        "status.pruneHeldRevision": "PruneHeldRevision is the revision whose apply is held because it "
                                    "would delete objects past the prune guard; the "
                                    "sync.kapi.dev/prune annotation allows it.",
        "status.history": "History contains a set of snapshots of the last reconciliation attempts, "
                          "newest first: the revisions a rollback may pin.",
        "status.history.revision": "Revision is the source revision of the snapshot.",
        "status.history.digest": "Digest is the checksum in the format `<algo>:<hex>` of the resources "
                                 "in this snapshot.",
        "status.history.firstReconciled": "FirstReconciled is the time when this revision was first "
                                          "reconciled to the cluster.",
        "status.history.lastReconciled": "LastReconciled is the time when this revision was last "
                                         "reconciled to the cluster.",
        "status.history.lastReconciledStatus": "LastReconciledStatus is the status of the last "
                                               "reconciliation.",
        "status.history.totalReconciliations": "TotalReconciliations is the total number of "
                                               "reconciliations that have occurred for this snapshot.",
        "status.history.applied": "Applied is how many objects the last reconciliation of this revision "
                                  "created or changed.",
        "status.history.pruned": "Pruned is how many objects the last reconciliation of this revision "
                                 "deleted.",
        "status.history.changed": "Changed lists the objects the revision changed, as inventory ids.",
        "status.pin": "Pin records the revision a rollback pinned the Sync to (the sync.kapi.dev/pin "
                      "annotation); new revisions of the source wait until it is removed.",
        "status.pin.revision": "Revision is the commit the Sync is pinned to.",
        "status.pin.sourceRevision": "SourceRevision is the source's revision when the pin was set.",
        "status.applied": "Applied is how many objects the last reconciliation created or changed.",
        "status.unchanged": "Unchanged is how many objects the last reconciliation found as desired.",
        "status.pruned": "Pruned is how many objects the last reconciliation deleted.",
        "status.inventory": "Inventory contains the list of Kubernetes resource object references that "
                            "have been successfully applied.",
        "status.inventory.entries": "Entries of Kubernetes resource object references.",
        "status.inventory.entries.id": "ID is the string representation of the Kubernetes resource object's "
                                       "metadata, in the format '<namespace>_<name>_<group>_<kind>'.",
        "status.inventory.entries.v": "Version is the API version of the Kubernetes resource object's kind.",
    },
    "Provider": {
        "": "Provider is the Schema for the providers API: where the notifications of Alerts are posted.",
        **_COMMON,
        "spec": "ProviderSpec defines the desired state of the Provider.",
        "spec.type": "Type specifies which Provider implementation to use: generic (JSON) or slack.",
        "spec.secretRef": "SecretRef specifies the Secret containing the authentication credentials for "
                          "this Provider: the webhook URL in its 'address' key.",
        "spec.secretRef.name": "Name of the referent Secret, in the Provider's namespace.",
        "spec.channel": "Channel specifies the destination channel where events should be posted.",
        "spec.username": "Username specifies the name under which events are posted.",
        "spec.suspend": _SUSPEND.format(what="events handling") + " Defaults to false.",
    },
    "Alert": {
        "": "Alert is the Schema for the alerts API: which events of Syncs and GitRepositories are "
            "posted to a Provider.",
        **_COMMON,
        "spec": "AlertSpec defines an alerting rule for events involving a list of objects.",
        "spec.providerRef": "ProviderRef specifies which Provider this Alert should use.",
        "spec.providerRef.name": "Name of the referent Provider, in the Alert's namespace.",
        "spec.eventSeverity": "EventSeverity specifies how to filter events based on severity. If set to "
                              "'info' no events will be filtered (failures and recoveries); 'error' "
                              "sends failures only.",
        "spec.eventSources": "EventSources specifies how to filter events based on the involved object "
                             "kind and name.",
        "spec.eventSources.kind": "Kind of the referent: Sync or GitRepository.",
        "spec.eventSources.name": "Name of the referent. If set to '*', all resources of the kind in "
                                  "the Alert's namespace are matched.",
        "spec.suspend": _SUSPEND.format(what="events dispatching") + " Defaults to false.",
    },
}


def described(kind: str, schema: dict) -> dict:
    """A copy of ``schema`` (a kind's openAPIV3Schema) with every field's
    description from :data:`DESCRIPTIONS`."""
    texts = DESCRIPTIONS[kind]
    out = copy.deepcopy(schema)

    def fill(node: dict, path: str) -> None:
        if path in texts:
            node["description"] = texts[path]
        target = node.get("items") if isinstance(node.get("items"), dict) else node
        for name, sub in (target.get("properties") or {}).items():
            if isinstance(sub, dict):
                fill(sub, f"{path}.{name}" if path else name)

    fill(out, "")
    return out
