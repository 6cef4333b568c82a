"""Many problems × solutions: planning, a local process pool, resumable trace storage, summaries."""
