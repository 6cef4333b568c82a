"""The built-in problem sets: recipes that write them, validation, statistics and the extractor."""
