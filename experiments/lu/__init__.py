"""The LU-GPU figures of paper 004 (Galoppo, Govindaraju, Henson, Manocha, SC'05): LU without,
with partial and with full pivoting on the GPU against LAPACK on the CPU.

    python -m experiments.lu.no_pivoting       # vs sgetrf (the paper: ATLAS getrf)
    python -m experiments.lu.partial_pivoting  # vs sgetrf (the paper: ATLAS getrf)
    python -m experiments.lu.full_pivoting     # vs sgetc2 (the paper: getc2 of Intel MKL)

The shared measurement, claims and plot are in ``experiments.lu.common``.
"""
