"""What the compiled extension promises beyond answers: its error kinds are the Python layer's,
and the working memory it keeps between calls stays within its caps."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from skeleton_compressor import SkeletonCompressorService, _core, _messages
from skeleton_compressor.cli.bench import make_fragments


def test_error_kinds_are_the_ones_the_messages_word() -> None:
    assert tuple(_core.ERROR_KINDS) == tuple(_messages.KINDS)


def test_kept_memory_is_capped_across_threads_and_can_be_released() -> None:
    per_thread, in_all = _core.SCRATCH_LIMITS
    rust = SkeletonCompressorService(backend="rust")
    fragments = make_fragments(400_000)
    everything = sum(f.token_count for f in fragments)
    rust.compress(fragments, everything)
    kept_by_one = _core.retained_scratch_bytes()
    assert 0 < kept_by_one <= per_thread
    workers = in_all // kept_by_one + 3  # more threads than the cap has room for

    def work(_: int) -> int:
        rust.compress(fragments, everything)
        return _core.retained_scratch_bytes()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        seen = list(pool.map(work, range(workers * 2)))
    assert max(seen) <= in_all
    assert _core.retained_scratch_bytes() <= in_all
    _core.release_scratch()
    assert _core.retained_scratch_bytes() <= in_all - kept_by_one
