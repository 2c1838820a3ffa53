"""The `skeleton-compressor` command (`main` in `main.py`), and the command line's records:
read with the standard library, checked, and their errors worded.

Empty of imports, so that the Python backend can read records without loading the command.
"""
