"""Train a policy on a mechgym environment: ``python training/train.py --env mechgym/CubeDrop-v0 --out runs/x``.

``python training/train.py --help`` lists the flags; the hyperparameters are ``training/hyperparams/<algo>.yml``.
"""

from mechgym.training.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
