-- One release by id.
SELECT id, created_at, source, target, search, policy, transformation, privacy, metrics, rows, suppressed_rows, input_hash
FROM sqlanon_releases
WHERE id = :id
