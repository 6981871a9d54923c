"""Ray: starting or joining it (``ray_session``, ``ray_join``), the processes it leaves, and the
evaluator that plays units of games as Ray tasks (``ray_evaluator``)."""
