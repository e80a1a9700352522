"""Layer 12, evaluation: the measurement suite (accuracy, seeding, limits, generalisation), result tables
written as Markdown + CSV, and figures."""
