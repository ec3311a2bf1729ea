"""Regenerate the figures and tables of the papers: ``python -m experiments`` lists them."""
