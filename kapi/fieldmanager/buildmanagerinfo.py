"""Turns a manager name into its identifier: name, operation, apiVersion and
subresource (kube's ``buildManagerInfoManager``)."""

from __future__ import annotations

from kapi.fieldmanager.interface import Wrapper
from kapi.fieldmanager.managed import manager_identifier

__all__ = ["BuildManagerInfoManager"]


class BuildManagerInfoManager(Wrapper):
    def __init__(self, inner, api_version: str, subresource: str = "") -> None:
        super().__init__(inner)
        self.api_version = api_version
        self.subresource = subresource

    def update(self, live, new, managed, manager):
        identifier = manager_identifier(
            manager, "Update", self.api_version, self.subresource
        )
        return self.inner.update(live, new, managed, identifier)

    def apply(self, live, config, managed, manager, force):
        identifier = manager_identifier(
            manager, "Apply", self.api_version, self.subresource
        )
        return self.inner.apply(live, config, managed, identifier, force)
