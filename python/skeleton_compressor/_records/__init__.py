"""The command line's records read with the standard library (`reader`), checked into the
columns `compress_arrays` takes (`checks`), and their problems as data with one wording for
both backends (`errors`).

Apart from the command line so that the Python backend, and the names the compiled extension
takes from Python, read and word records without loading the command.
"""
