"""Training with stable-baselines3: hyperparameters in rl-zoo3's format, run folders, and the training loop.

``training/train.py`` (the command line) and ``mechgym demo --train`` call :func:`train`; evaluation reads
run folders through :mod:`mechgym.training.runs` only.
"""
