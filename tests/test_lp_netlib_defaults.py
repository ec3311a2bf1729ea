"""Issue 11's done-when on llvmpipe: ``solve(p, backend=..., eps=1e-8)`` with the defaults (the
presolve, the primal correction and the free-split safeguard on below eps = 3e-5; refinement
and factor_precision="auto" on the GPU) is optimal, objective within 1e-6 of HiGHS's, on the
NETLIB problems of at most 200 standard-form rows. The larger ones run on the NVIDIA GPU
machine (README, "Robustness"): llvmpipe takes minutes each; forplan on the GPU, which
switches to float-float factors, is a long test (GPGPU_LONG_TESTS=1)."""
import os

import pytest

pytest.importorskip("highspy")

from gpgpu.lp import solve  # noqa: E402

from test_lp_mehrotra import netlib, netlib_more, rel  # noqa: E402

#: (folder, name) of the problems of at most 200 standard-form rows
SMALL = [("netlib", "afiro"), ("netlib", "sc50b"), ("netlib", "adlittle"), ("netlib", "blend"),
         ("netlib", "beaconfd"), ("more", "scsd6"), ("more", "forplan")]


@pytest.mark.parametrize("backend", ["numpy64", "gpu"])
@pytest.mark.parametrize("folder,name", SMALL)
def test_small_netlib_problems_with_the_defaults_at_1e_8(folder, name, backend):
    if backend == "gpu" and name == "forplan" and not os.environ.get("GPGPU_LONG_TESTS"):
        pytest.skip("40 s on llvmpipe (float-float factors after a stall); set GPGPU_LONG_TESTS=1")
    p, ref = netlib(name) if folder == "netlib" else netlib_more(name)
    r = solve(p, backend=backend, eps=1e-8)
    assert r.status == "optimal", r.message
    assert rel(r.objective, ref) <= 1e-6
    assert r.presolve is not None                       # the robust defaults were on
