"""What one tab hands another to run (through the context's run_again), typed: the tab that
made or compared a variant, or the history, hands the Drift tab a DriftPair."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DriftPair:
    """A variant and its source, and the conversion that made it, when known."""
    source: str
    variant: str
    conversion: dict | None = None      # the conversion's report: its tolerance, and how to remake it with a repair
