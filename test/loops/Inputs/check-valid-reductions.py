"""Checks test/loops/valid-reductions.pto's outputs (a run folder) against numpy:
per block of 4 rows of x, the max, min, sum of exp and mean of its valid rows only."""
import sys
from pathlib import Path

import numpy as np

inputs, outputs = Path(sys.argv[1]), Path(sys.argv[2])
x = np.load(inputs / "x.npy").astype(np.float64)
got = [np.load(outputs / f"result{k}.npy") for k in range(4)]
for b in range((len(x) + 3) // 4):
    rows = x[b * 4:b * 4 + 4]
    for k, want in enumerate((rows.max(0), rows.min(0), np.exp(rows).sum(0), rows.mean(0))):
        np.testing.assert_allclose(got[k][b], want, rtol=1e-5, err_msg=f"result {k}, block {b}")
print("valid reductions match numpy")
