"""What readers see of a plan: the verdict, the routes side by side, footnoted sources, the
assumptions table, numbers in the reader's locale, and the engine's messages (codes with
parameters) rendered from their one template each (templates.py, messages.py; api.py for the
API's English)."""
