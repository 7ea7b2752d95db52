"""Deployment bundles generated from a plan: allocation table, scripts, Nginx, Ray Serve, README."""

from planner.engine.configs.build import build_configs, empty_configs

__all__ = ["build_configs", "empty_configs"]
