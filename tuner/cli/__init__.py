"""The ``tune`` command line: ``main`` parses and dispatches, one module per subcommand turns its
arguments into calls of ``engine`` and ``tuner``, which never read a command line themselves."""
