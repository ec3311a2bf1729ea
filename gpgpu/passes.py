"""A multipass algorithm as a list of draws on a ping-pong pair.

The papers' algorithms (Algorithm 2 of 000, Algorithms 3 and 5 of 001) are sequences of
"bind X as the target, run kernel K over primitive P, swap S and T". A plan is exactly that:
``Draw(kernel, target, primitive, inputs)`` items, where target and inputs name roles
("S", "T", or any other stream given to ``run``), and ``SWAP``. Plans are pure, so tests can
rasterize every primitive of every step and compare its coverage with the intended texels,
and ``run`` executes them with the streams bound.
"""
from __future__ import annotations

from typing import NamedTuple

from .kernel import Kernel
from .stream import PingPong

__all__ = ["Draw", "SWAP", "run"]

SWAP = "swap"


class Draw(NamedTuple):
    kernel: Kernel
    target: str  # role of the target stream
    primitive: object
    inputs: dict  # sampler name -> role
    uniforms: dict | None = None
    texels: int | None = None


def run(plan, pp: PingPong, others: dict | None = None, transfer: str = "rtt") -> None:
    """Execute a plan: roles "S" and "T" are the ping-pong pair, other roles come from ``others``."""
    others = others or {}
    for item in plan:
        if item is SWAP:
            pp.swap()
            continue
        roles = {"S": pp.S, "T": pp.T, **others}
        item.kernel.draw(roles[item.target], item.primitive,
                         {name: roles[role] for name, role in item.inputs.items()},
                         item.uniforms, item.texels, transfer)
