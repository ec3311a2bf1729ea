"""Paper 001 (Jung & O'Leary, forming and factoring A D² Aᵀ on the GPU): Figs. 8-9, Tables 1-2.

``python -m experiments.adat.fig8`` (etc.) runs one; ``python -m experiments`` lists them all.
"""
