"""`skeleton-compressor bench`: its options (`command`), the generated fragment sets
(`fragments`), the timer (`timing`), and the figures: both backends on one set (`figures`),
with variant sets (`variants`), and the command timed as a process on files (`files`)."""
