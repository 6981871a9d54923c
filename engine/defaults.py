"""Search and reporting defaults, and the moves' names, shared by the solver, the external
engines' protocol and the command lines.

They live apart from ``engine.solver`` and ``engine.board`` so that a command line can set its
defaults without importing numpy, numba and the compiled kernels (a bad argument is refused at
once).
"""

DEFAULT_CUTOFF = 1e-4  # cumulative-probability cutoff of the search
MILESTONES = (2048, 4096, 8192, 16384, 32768)  # tiles whose reach rates are reported
MOVE_NAMES = ("up", "down", "left", "right")  # by move number (engine.board.Move)
