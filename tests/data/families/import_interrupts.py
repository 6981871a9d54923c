"""A family module whose import raises KeyboardInterrupt: for the bad-input corpus."""

raise KeyboardInterrupt
