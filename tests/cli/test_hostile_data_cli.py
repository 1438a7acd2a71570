"""A hostile --data folder, end to end: one line and exit 2, never an internal error."""

import numpy as np

from tests import models


def test_bench_on_a_data_folder_whose_npy_claims_200_gb_says_so_with_exit_2(ortune, tmp_path):
    models.save(models.mlp(width=16), tmp_path / "m.onnx")
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "big.npy", "wb") as out:
        np.lib.format.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False,
                                                   "shape": (50_000_000_000,)})
    done = ortune("bench", "m.onnx", "--data", "data", "--iterations", "3", cwd=tmp_path)
    assert done.code == 2, done.stderr
    assert "big.npy: its header claims" in done.stderr and len(done.stderr.strip().splitlines()) == 1
