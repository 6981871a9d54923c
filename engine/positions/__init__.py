"""Positions sampled from games and labelled by a deeper search: ``sampling`` takes and labels
them, ``set_file`` keeps them in a position set file."""
