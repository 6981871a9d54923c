"""A run directory: the checkpoint and the files written beside it, locks, stop requests and
the staging that ``--overwrite`` uses (``run_dir``), the job's ``status.json``
(``status_file``), behind one store (``store``)."""
