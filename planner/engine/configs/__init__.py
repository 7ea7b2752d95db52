"""Launch configs generated from a plan: vLLM, Ray, Nginx, Ray Serve, .env, docker, README."""

from planner.engine.configs.build import build_configs

__all__ = ["build_configs"]
