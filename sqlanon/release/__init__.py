"""Writing a release: the plan applied in SQL and written with its registry row (both or neither), microaggregation, leftovers."""
