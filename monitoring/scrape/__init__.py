"""Pure-Python scraping of vLLM and Ray metrics: fetch, parse, extract, derive. No Django here."""
