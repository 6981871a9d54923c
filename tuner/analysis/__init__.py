"""What ``tune play``, ``compare``, ``noise``, ``report`` and ``status`` compute from games and
run directories, and a run's price, apart from the command line that prints it."""
