"""The two backends behind one protocol (`protocol`): the compiled Rust extension, with the
names it takes from Python (`rust`), and the Python backend (`python`); which one a name
means (`choice`), and the compressor made on it (`loader`).

Empty of imports, so that importing one of these loads no other.
"""
