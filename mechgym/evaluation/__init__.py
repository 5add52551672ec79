"""dt-robustness evaluation: a grid of runs x backends x physics steps, each cell a set of seeded episodes.

``grid`` plans the cells (holding the control period or the decimation), ``cells`` runs one, ``runner``
runs many in local processes or as Ray tasks, ``store`` keeps finished cells on disk so an evaluation
resumes, ``stats`` has the intervals and the dt margin, ``report`` writes tables, CSV, JSON, plots and
``report.md``; ``evaluate`` ties them together for ``mechgym evaluate``.
"""
