"""Search and reporting defaults shared by the solver and the command lines.

They live apart from ``engine.solver`` so that a command line can set its defaults without
importing numba and the compiled kernels (a bad argument is refused at once).
"""

DEFAULT_CUTOFF = 1e-4  # cumulative-probability cutoff of the search
MILESTONES = (2048, 4096, 8192, 16384, 32768)  # tiles whose reach rates are reported
