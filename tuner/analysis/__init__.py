"""What ``tune play``, ``compare``, ``noise`` and ``report`` compute from games and run
directories, apart from the command line that prints it."""
