"""Decide, per class, whether it is converted or refused; decisions live here only."""
