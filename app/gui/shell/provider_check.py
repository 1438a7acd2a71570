"""The window's check of which execution providers start here, with the plugin libraries the
Session tab names (the saved setup's until the tab's is restored), made again when the user
changes those libraries."""

from __future__ import annotations


def start_check(window) -> None:
    from app.core.session.jobs import PROBE_PROVIDERS, ProbeParams

    libraries = window.session.get("ep_libraries") or window.settings.session.get("ep_libraries")
    window.jobs.start("Check execution providers", PROBE_PROVIDERS, ProbeParams.of_libraries(libraries),
                      on_result=window.providers_checked)


def follow_libraries(window) -> None:
    """Check again whenever the Session tab's provider libraries change."""
    def changed(_state, names) -> None:
        if "ep_libraries" in names and window._probe_providers:
            start_check(window)
    window.session.subscribe(changed)
