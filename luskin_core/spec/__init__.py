"""What to audit: the typed specification, its conditions, the one validator, first guesses and saved files."""
