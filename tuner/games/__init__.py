"""Games and their scheduling: the budget of games a candidate plays, the fitness of its
results, the seeds, what is played when (schedules and the one driver loop), and the evaluator
that plays them in this process. Nothing here knows Ray (``tuner.cluster`` plays on it)."""
