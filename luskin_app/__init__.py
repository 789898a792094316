"""The dashboard's shared session and caching helpers (the pages live in pages/)."""
