"""The paper's corrections: relabel and retrain, per-group thresholds, the equalized classifier, and what each costs."""
