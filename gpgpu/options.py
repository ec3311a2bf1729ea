"""The record of one option of a solver (a leaf module: ``gpgpu.lp.options`` and ``gpgpu.cg``
keep their tables of these, from which their presets are checked, their docs' options pages
rendered and the command line's flags built)."""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["Option"]


class Option(NamedTuple):
    """One option: its name, who reads it (``readers``), the values it takes and what it does.

    ``parse`` says how a command line reads its value: a tuple of the words it takes (a mapping
    from reader to such a tuple where the readers take different words), ``bool`` for an on/off
    flag (``--name`` and ``--no-name``), or a function from the text to the value (raising
    ``argparse.ArgumentTypeError``, as :func:`gpgpu.cli.positive_int`); None where the value is
    not one a command line can give (a function, an object). ``flag`` is the command line's name
    where it is not ``--`` and the name with ``-`` for ``_``."""
    name: str
    readers: tuple
    values: str
    doc: str
    parse: object = None
    flag: str = ""

    @property
    def cli_flag(self) -> str:
        """The command line's name of the option: ``flag``, or ``--`` and the name with dashes."""
        return self.flag or "--" + self.name.replace("_", "-")
