"""Simplified Chinese numbers grouped by thousands with ",": Django's zh_Hans formats group
nothing ("1339328"), while Chinese readers of technical figures (GPU memory, tokens, tok/s) expect
"1,339,328", as in Chinese vendor documentation. Dates stay Django's."""

THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
