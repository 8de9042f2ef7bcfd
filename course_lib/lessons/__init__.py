"""Mechanics for individual lessons (what one notebook needs and no other)."""
