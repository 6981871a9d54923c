"""The tuning loop: a generation step that asks, plays and tells and returns a record of what
happened, the observers that turn records into files, log lines and progress bars, validation,
and the run's lifecycle (start, resume, stop, finish) that drives them."""
