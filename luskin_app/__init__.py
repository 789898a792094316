"""The dashboard's session, choices, caching and page furniture (the pages live in app_pages/)."""
