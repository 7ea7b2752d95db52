"""Reads of saved plans for other apps: typed values, never the raw result JSON."""
