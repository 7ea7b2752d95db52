"""Inventory pages."""
