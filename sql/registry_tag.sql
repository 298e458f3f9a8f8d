-- The target and run keys of one release (a dbt model's unique id, the run's invocation id, its release key
-- and the release it re-runs); written with the release row, in its transaction.
UPDATE sqlanon_releases
SET target = :target, model_id = :model_id, invocation_id = :invocation_id, release_key = :release_key, rerun_of = :rerun_of
WHERE id = :id
