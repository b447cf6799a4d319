"""The GitOps pages' repeated HTML (a tree's rows, the home's tiles) written
in Python: Django's template engine costs about a millisecond per row of a
dozen variables, too slow for a thousand rows. Every value is escaped with
``html.escape``; the result is marked safe once."""

from __future__ import annotations

from html import escape

from django.utils.safestring import SafeString, mark_safe

__all__ = ["tiles", "tree_rows"]


def _e(value) -> str:
    return escape(str(value if value is not None else ""), quote=True)


def tree_rows(nodes) -> SafeString:
    out = []
    for n in nodes:
        label = _e(f"{n.namespace}/{n.name}" if n.namespace else n.name)
        link = f'<a href="{_e(n.url)}">{label}</a>' if n.url else label
        diff = f'<a href="{_e(n.diff_url)}" class="diff-link">diff</a>' if getattr(n, "diff_url", "") else ""
        out.append(
            f'<tr class="tree-node" data-depth="{n.depth}" data-state="{_e(n.state)}" '
            f'data-name="{_e(n.kind)}/{_e(n.name)}">'
            f'<td style="padding-left:{8 + 22 * n.depth}px">{"└ " if n.depth else ""}{link}</td>'
            f'<td class="kind">{_e(n.kind)}</td>'
            f'<td><span class="sync-state sync-{_e(n.state)}">{_e(n.state)}</span></td>'
            f'<td><span class="health health-{_e(n.health)}" title="{_e(n.health_message)}">{_e(n.health)}</span></td>'
            f"<td>{diff}</td></tr>"
        )
    return mark_safe("\n".join(out))


def _trunc(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def tiles(rows) -> SafeString:
    out = []
    for r in rows:
        if r.revision:
            branch = f" on {_e(r.branch)}" if r.branch else ""
            commit = f'<div class="commit">{_e(_trunc(r.commit_message, 70))}</div>' if r.commit_message else ""
            when = " · ".join(x for x in (_e(r.author), f"applied {_e(r.applied_at)}" if r.applied_at else "") if x)
            revision = (f'<code title="{_e(r.revision)}">{_e(r.sha[:8])}</code>{branch}{commit}'
                        f'<div class="quiet">{when}</div>')
        else:
            revision = '<span class="quiet">never applied</span>'
        source = f'{_e(r.source)} <span class="quiet">{_e(r.source_url) if r.source_url else "(hosted)"}</span>'
        counts = "".join(
            f' <span class="state state-failed">{n} {word}</span>'
            for n, word in ((r.drifted, "drifted"), (r.missing, "missing")) if n)
        notes = []
        if r.prune_held:
            notes.append(f'<div class="tile-note held">Prune held at {_e(r.prune_held[:12])}: the revision '
                         "would delete objects; nothing applied.</div>")
        if r.pinned:
            notes.append(f'<div class="tile-note">Pinned to {_e(r.pinned[:12])} (rolled back).</div>')
        if r.suspended:
            notes.append('<div class="tile-note">Suspended: new revisions wait.</div>')
        if r.failure:
            notes.append(f'<div class="tile-note failure">{_e(_trunc(r.failure, 300))}</div>')
        reason = f" · {_e(r.reason)}" if r.reason else ""
        out.append(
            f'<div class="kapi-tile state-border-{_e(r.state)}" id="sync-{_e(r.namespace)}-{_e(r.name)}" '
            f'data-state="{_e(r.state)}">'
            f'<div class="tile-head"><a href="{_e(r.url)}" class="tile-name">{_e(r.name)}</a>'
            f'<span class="tile-ns">{_e(r.namespace)}</span>'
            f'<span class="state state-{_e(r.state)}" title="{_e(r.reason)}">{_e(r.state)}</span></div>'
            '<table class="tile-facts">'
            f'<tr><th>Ready</th><td class="ready">{_e(r.ready)}{reason} '
            f'<span class="health health-{_e(r.health)}" title="health (kstatus)">{_e(r.health)}</span></td></tr>'
            f'<tr><th>Revision</th><td class="revision">{revision}</td></tr>'
            f"<tr><th>Source</th><td>{source}</td></tr>"
            f'<tr><th>Target</th><td>{_e(r.target)} <span class="quiet">{_e(r.path)}</span></td></tr>'
            f'<tr><th>Objects</th><td><a href="{_e(r.tree_url)}" class="tree-link">{r.inventory} applied</a>'
            f"{counts}</td></tr></table>{''.join(notes)}</div>"
        )
    return mark_safe("\n".join(out))
