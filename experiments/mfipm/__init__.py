"""Paper 002 (Smith, Gondzio, Hall): the matrix-free interior point method, Tables 1-3."""
