"""CRD names within a group are first come, first served (kube's naming
controller): a CRD asking for a name another CRD has accepted gets
``NamesAccepted=False`` and is not established nor served until the name is
free; deleting a CRD marks it ``Terminating`` while its custom resources go."""

from __future__ import annotations

import time
import uuid

from tests.api.conftest import assert_status
from tests.api.test_crd_http import CRD_PATH, _crd, _gadget


def _named(group: str, plural: str, kind: str, short: list[str]) -> dict:
    body = _crd(group)
    body["metadata"]["name"] = f"{plural}.{group}"
    body["spec"]["names"] = {
        "plural": plural,
        "singular": plural[:-1],
        "kind": kind,
        "shortNames": short,
    }
    return body


def _conditions(crd: dict) -> dict[str, dict]:
    return {c["type"]: c for c in crd["status"]["conditions"]}


def _wait_for(api, name: str, predicate, seconds: float = 30) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        crd = api.get(f"{CRD_PATH}/{name}").json()
        if predicate(crd) or time.monotonic() > deadline:
            return crd
        time.sleep(0.3)


def test_name_clash_in_a_group_is_refused_until_the_name_is_free(api, namespace):
    group = f"n{uuid.uuid4().hex[:8]}.example.com"
    first = api.post(CRD_PATH, _named(group, "gadgets", "Gadget", ["gd"]))
    assert first.status_code == 201, first.text
    try:
        short = api.post(CRD_PATH, _named(group, "gizmos", "Gizmo", ["gd"]))
        assert short.status_code == 201, short.text
        kind = api.post(CRD_PATH, _named(group, "widgets", "Gadget", []))
        assert kind.status_code == 201, kind.text

        conditions = _conditions(short.json())
        assert conditions["NamesAccepted"]["status"] == "False"
        assert conditions["NamesAccepted"]["reason"] == "ShortNamesConflict"
        assert conditions["NamesAccepted"]["message"] == '"gd" is already in use'
        assert conditions["Established"]["status"] == "False"
        assert conditions["Established"]["reason"] == "NotAccepted"
        assert "shortNames" not in short.json()["status"]["acceptedNames"]
        assert short.json()["status"]["acceptedNames"]["plural"] == "gizmos"

        conditions = _conditions(kind.json())
        # Kind and listKind both clash; as in kube, the last check names it.
        assert conditions["NamesAccepted"]["reason"] == "ListKindConflict"
        assert (
            conditions["NamesAccepted"]["message"] == '"GadgetList" is already in use'
        )
        assert kind.json()["status"]["acceptedNames"]["kind"] == ""
        assert conditions["Established"]["status"] == "False"

        # Neither is served; the first one is untouched.
        served = {r["name"] for r in api.get(f"/apis/{group}/v1").json()["resources"]}
        assert "gizmos" not in served and "widgets" not in served
        assert "gadgets" in served
        gizmos = f"/apis/{group}/v1/namespaces/{namespace}/gizmos"
        refused = api.post(gizmos, {**_gadget("x"), "kind": "Gizmo"})
        assert refused.status_code == 404, refused.text
        assert (
            _conditions(api.get(f"{CRD_PATH}/gadgets.{group}").json())["NamesAccepted"][
                "status"
            ]
            == "True"
        )

        # The first CRD goes: its names are free and the others recover.
        assert api.delete(f"{CRD_PATH}/gadgets.{group}").status_code == 200
        recovered = _wait_for(
            api,
            f"gizmos.{group}",
            lambda c: _conditions(c)["Established"]["status"] == "True",
        )
        conditions = _conditions(recovered)
        assert conditions["NamesAccepted"]["status"] == "True", conditions
        assert conditions["NamesAccepted"]["reason"] == "NoConflicts"
        assert conditions["Established"]["status"] == "True"
        assert recovered["status"]["acceptedNames"]["shortNames"] == ["gd"]
        widgets = _wait_for(
            api,
            f"widgets.{group}",
            lambda c: _conditions(c)["Established"]["status"] == "True",
        )
        assert _conditions(widgets)["NamesAccepted"]["status"] == "True"
        created = api.post(gizmos, {**_gadget("x"), "kind": "Gizmo"})
        assert created.status_code == 201, created.text
    finally:
        for plural in ("gadgets", "gizmos", "widgets"):
            api.delete(f"{CRD_PATH}/{plural}.{group}")


def test_an_established_crd_keeps_serving_its_accepted_names(api):
    """A later change asking for a taken short name is refused in status while
    the kind stays served under the names it had."""
    group = f"e{uuid.uuid4().hex[:8]}.example.com"
    assert (
        api.post(CRD_PATH, _named(group, "gadgets", "Gadget", ["gd"])).status_code
        == 201
    )
    assert (
        api.post(CRD_PATH, _named(group, "gizmos", "Gizmo", ["gz"])).status_code == 201
    )
    try:
        current = api.get(f"{CRD_PATH}/gizmos.{group}").json()
        current["spec"]["names"]["shortNames"] = ["gd"]
        updated = api.put(f"{CRD_PATH}/gizmos.{group}", current)
        assert updated.status_code == 200, updated.text
        conditions = _conditions(updated.json())
        assert conditions["NamesAccepted"]["status"] == "False"
        assert conditions["Established"]["status"] == "True"
        assert updated.json()["status"]["acceptedNames"]["shortNames"] == ["gz"]
        resources = api.get(f"/apis/{group}/v1").json()["resources"]
        gizmos = next(r for r in resources if r["name"] == "gizmos")
        assert gizmos["shortNames"] == ["gz"]
    finally:
        for plural in ("gadgets", "gizmos"):
            api.delete(f"{CRD_PATH}/{plural}.{group}")


def test_deleting_crd_is_terminating_and_refuses_creates(api, namespace):
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    assert api.post(CRD_PATH, _crd(group)).status_code == 201
    url = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"
    assert api.post(url, _gadget("a")).status_code == 201
    deleting = api.delete(f"{CRD_PATH}/gadgets.{group}")
    assert deleting.status_code == 200, deleting.text
    terminating = _conditions(deleting.json())["Terminating"]
    assert terminating["status"] == "True"
    assert terminating["reason"] == "InstanceDeletionInProgress"
    assert terminating["message"] == "CustomResource deletion is in progress"
    status = assert_status(api.post(url, _gadget("c")), 405, "MethodNotAllowed")
    assert status["message"] == (
        "create not allowed while custom resource definition is terminating"
    )
    gone = _wait_for(api, f"gadgets.{group}", lambda c: c.get("kind") == "Status")
    assert gone.get("code") == 404, gone


def test_clashing_crds_created_at_the_same_moment_get_one_winner(api, kapi_server):
    """Two CRDs asking for one short name at the same moment (each on its own
    connection, so the two API processes serve them) never both accept it."""
    import threading

    from tests.api.conftest import API

    rounds = 8
    groups = [f"r{uuid.uuid4().hex[:8]}.example.com" for _ in range(rounds)]
    results: dict[tuple[int, str], dict] = {}

    def create(i: int, plural: str, kind: str, barrier: threading.Barrier) -> None:
        client = API(kapi_server)  # a connection of its own
        client.get("/version")  # connect before the barrier
        barrier.wait()
        response = client.post(CRD_PATH, _named(groups[i], plural, kind, ["gd"]))
        results[(i, plural)] = response.json()

    try:
        for i in range(rounds):
            barrier = threading.Barrier(2)
            threads = [
                threading.Thread(target=create, args=(i, plural, kind, barrier))
                for plural, kind in (("gadgets", "Gadget"), ("gizmos", "Gizmo"))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        for i in range(rounds):
            accepted = {}
            for plural in ("gadgets", "gizmos"):
                crd = results[(i, plural)]
                assert crd.get("kind") == "CustomResourceDefinition", crd
                accepted[plural] = _conditions(crd)["NamesAccepted"]
            verdicts = sorted(c["status"] for c in accepted.values())
            assert verdicts == ["False", "True"], (i, accepted)
            loser = next(c for c in accepted.values() if c["status"] == "False")
            assert loser["reason"] == "ShortNamesConflict"
            assert loser["message"] == '"gd" is already in use'
    finally:
        for i in range(rounds):
            for plural in ("gadgets", "gizmos"):
                api.delete(f"{CRD_PATH}/{plural}.{groups[i]}")
