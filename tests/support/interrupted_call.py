"""A call long enough to be interrupted: `python interrupted_call.py BACKEND SIZE`.

Prints `ready` just before an `optimal` compression that would take minutes (Pisinger's
strongly correlated class with token counts up to 100,000), then `interrupted` when Ctrl-C
stops it, or `finished` if nothing did.
"""

from __future__ import annotations

import sys

from skeleton_compressor import SkeletonCompressorService
from skeleton_compressor.cli.bench.fragments import make_knapsack_fragments

SPREAD = 100_000


def main(backend: str, size: int) -> int:
    fragments, budget = make_knapsack_fragments(size, "strongly", spread=SPREAD)
    service = SkeletonCompressorService(backend=backend, strategy="optimal", max_work=None)
    print("ready", flush=True)
    try:
        service.compress(fragments, budget)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        return 0
    print("finished", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
