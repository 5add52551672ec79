"""Bundled MJCF scenes (one per environment), installed as ``mechgym.envs``."""
