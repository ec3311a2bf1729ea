"""The sparse experiments (papers 002 and 003) at CI sizes: they run, write their files, and
their claims carry the measured figures."""
import csv

PNG = b"\x89PNG\r\n\x1a\n"


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_spmv_poisson(tmp_path):
    from experiments.cg.spmv import EXPERIMENT

    o = EXPERIMENT.execute(sizes=[64, 256], repeat=1, out=tmp_path, quiet=True, poisson_only=True)
    r = rows(tmp_path / "cg_spmv.csv")
    assert {x["format"] for x in r} == {"ellpack", "tell", "corrigan", "corrigan_sorted"}
    assert len(r) == 2 * 2 * 4
    # Poisson's rows have 3 (2-D) or 4 (3-D) distinct counts: sorted, one pass per count
    srt = [x for x in r if x["format"] == "corrigan_sorted"]
    assert all(x["passes"] == x["programs"] for x in srt)
    assert all(int(x["passes"]) > int(x["programs"]) for x in r if x["format"] == "corrigan")
    assert all(float(x["nnz_per_second"]) > 0 and float(x["cpu_seconds"]) > 0 for x in r)
    ell = [x for x in r if x["format"] == "ellpack"]
    assert all(float(x["bytes_with_transpose"]) > float(x["bytes"]) for x in ell)
    assert any("speed-up" in c.text for c in o.claims)
    assert (tmp_path / "cg_spmv.png").read_bytes()[:8] == PNG


def test_convergence(tmp_path):
    from experiments.cg.convergence import EXPERIMENT

    o = EXPERIMENT.execute(sizes=[8], repeat=1, out=tmp_path, quiet=True)
    last = [x for x in rows(tmp_path / "cg_convergence.csv") if x.get("iterations")]
    # 003's sorted storage is the main series, ELLPACK beside it
    assert {x["solver"] for x in last} == {"gpu_corrigan_pyramid", "gpu_corrigan_pingpong", "gpu_ellpack_pyramid",
                                           "scipy_float32", "scipy_float64"}
    its = {x["solver"]: int(x["iterations"]) for x in last}
    for gpu in ("gpu_corrigan_pyramid", "gpu_corrigan_pingpong", "gpu_ellpack_pyramid"):
        assert abs(its[gpu] - its["scipy_float32"]) <= 0.1 * its["scipy_float32"] + 1
    assert all(float(x["final_residual"]) < 1.1e-5 for x in last)
    assert o.claims[0].text.startswith("GPU CG iterations (003's sorted storage")
    assert any("ELLPACK" in c.text for c in o.claims)


def test_sorting(tmp_path):
    from experiments.cg.sorting import EXPERIMENT

    o = EXPERIMENT.execute(sizes=[64], repeat=1, out=tmp_path, quiet=True)
    r = rows(tmp_path / "cg_sorting.csv")
    for x in r:
        if x["sorted"] == "True":
            assert int(x["passes"]) == int(x["programs"])
    assert "yes for every matrix" in o.claims[0].measured
    assert "equal for every matrix" in o.claims[1].measured


def test_rbf_surface(tmp_path):
    from experiments.cg.rbf_surface import EXPERIMENT

    o = EXPERIMENT.execute(sizes=[300], repeat=1, out=tmp_path, quiet=True)
    r = rows(tmp_path / "cg_rbf_surface.csv")
    assert {(x["case"], x["storage"]) for x in r} == {(c, s) for c in ("curve_2d", "torus_3d")
                                                      for s in ("corrigan_sorted", "ellpack")}
    assert all(x["cg_info"] == "0" for x in r)
    assert "within 10%: 4 of 4" in o.claims[0].measured
    # 003's dense last row: N centres and one row and column more
    assert all(int(x["nnz"]) > 0 and float(x["relative_difference_to_scipy32"]) < 2e-3 for x in r)
    assert (tmp_path / "cg_rbf_surface.png").read_bytes()[:8] == PNG
