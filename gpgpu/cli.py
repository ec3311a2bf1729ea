"""argparse types shared by the command lines (``python -m gpgpu``, ``gpgpu.lp``, ``experiments``):
a bad value is an argparse error that names the rule, never a traceback. The output checks
(:func:`output_folder_problem`, :func:`output_file_problem`) run before a command does its work,
so that a path it cannot write is refused at once, not after minutes of work; one that fails
all the same when written (a full disk) is said in one line by :func:`write_error`."""
from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["run_main", "positive_int", "positive_int_or_off", "positive_float", "tolerance", "output_folder_problem", "output_file_problem",
           "write_error"]


def run_main(main, argv=None) -> int:
    """A command line's exit code: ``main(argv)``, and where its reader closed the output early
    (``python -m gpgpu.lp afiro | head``), exit quietly as other Unix tools do: stdout is pointed
    at /dev/null so that Python's flush at exit does not fail again (Python's documentation on
    SIGPIPE), and the code is 141 (128 + SIGPIPE)."""
    try:
        return main(argv)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def positive_int_or_off(text: str):
    """An integer >= 1, or False for "off" (a threshold that can be switched off)."""
    if text.strip().lower() in ("off", "false", "no"):
        return False
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or off, got {text!r}") from None


def positive_int_or_auto(text: str):
    """An integer >= 1, or "auto" (the value decided by the other options)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or auto, got {text!r}") from None


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


def output_folder_problem(path, option: str = "--out") -> str | None:
    """None when files can be written into the folder ``path`` (created, with its parents, when
    missing); else the sentence for the user: the cause and what to give instead. Writability is
    tried by creating (and removing) a file there, so a read-only or special file system such as
    /proc is refused even for root."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        return f"{option} {str(path)!r} is an existing file, not a folder; give a folder (it is created if missing)"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{option} {str(path)!r}: cannot create the folder ({exc.strerror}); give a folder you can write"
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=path)
    except OSError as exc:
        return f"{option} {str(path)!r}: cannot write files there ({exc.strerror}); give a folder you can write"
    os.close(fd)
    os.unlink(probe)
    return None


def output_file_problem(path, option: str = "--json") -> str | None:
    """None when the file ``path`` can be written (its folder must exist; an existing file is
    left as it is until the command writes it); else the sentence for the user: the cause and
    what to give instead."""
    path = Path(path)
    if path.is_dir():
        return f"{option} {str(path)!r} is a folder; give a file name"
    parent = path.parent
    if not parent.is_dir():
        return f"{option} {str(path)!r}: the folder {str(parent)!r} does not exist; create it or give another file"
    if path.exists() and not path.is_file():       # a device or a pipe: opening it could block
        if os.access(path, os.W_OK):
            return None
        return f"{option} {str(path)!r}: cannot write it (permission denied); give a file you can write"
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        return f"{option} {str(path)!r}: cannot write the file ({exc.strerror}); give a file you can write"
    if not existed:
        os.unlink(path)
    return None


def write_error(option: str, path, exc: OSError, what: str = "the file") -> str:
    """The sentence for the user when writing ``what`` to ``path`` (given as ``option``) failed
    with ``exc`` after the checks above passed: the option, the path, the cause (the system's
    words, and the file when it is another) and what to do. A command prints it after
    ``error: `` and exits with status 2, as for the checks."""
    cause = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None and str(exc.filename) != str(path):
        cause = f"{exc.filename}: {cause}"
    fix = ("free some space or give a path on another disk" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
           else "give a path you can write")
    return f"{option} {str(path)!r}: cannot write {what} ({cause}); {fix}"
