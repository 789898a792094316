"""One result per analysis (the audit, adjusted gaps, regulator tables, series, proxies) and its words."""
