"""Experiments of paper 003 (CG on graphics hardware) and of section 3 of paper 002 (sparse
matrix-vector products): spmv, convergence, sorting, rbf_surface."""
