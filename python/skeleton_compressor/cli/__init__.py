"""The `skeleton-compressor` command: `main` in `main.py`."""
