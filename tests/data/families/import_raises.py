"""A family module whose import raises: for the bad-input corpus."""

raise ImportError("this family needs a plugin that is not installed")
