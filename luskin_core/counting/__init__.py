"""From a specification to one count table: the plan, and its executors in memory and in the engines."""
