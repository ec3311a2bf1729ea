"""The record of one option of a solver (a leaf module: ``gpgpu.lp.options`` and ``gpgpu.cg``
keep their tables of these, from which their presets are checked and their docs' options pages
rendered)."""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["Option"]


class Option(NamedTuple):
    """One option: its name, who reads it (``readers``), the values it takes and what it does."""
    name: str
    readers: tuple
    values: str
    doc: str
