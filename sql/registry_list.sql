-- All releases, newest first.
SELECT id, created_at, source, target, search, transformation, privacy, metrics, rows, suppressed_rows, input_hash
FROM sqlanon_releases
ORDER BY id DESC
