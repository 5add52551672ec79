"""dt- and backend-robustness evaluations: sweeps that produce tables, CSV files and plots."""
