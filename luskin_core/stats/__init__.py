"""Statistics on count tables: intervals, tests, pooling across strata, comparisons and their verdicts."""
