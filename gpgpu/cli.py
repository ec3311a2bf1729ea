"""argparse types shared by the command lines (``python -m gpgpu``, ``gpgpu.lp``, ``experiments``):
a bad value is an argparse error that names the rule, never a traceback."""
from __future__ import annotations

import argparse

__all__ = ["positive_int", "tolerance"]


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (0.0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text}")
    return value


def tolerance(text: str) -> float:
    """A number with 0 < eps < 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (0.0 < value < 1.0):
        raise argparse.ArgumentTypeError(f"eps must satisfy 0 < eps < 1, got {text}")
    return value
