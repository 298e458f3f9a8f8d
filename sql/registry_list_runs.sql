-- The run keys of every release (registries made before they were stored lack these columns).
SELECT id, model_id, invocation_id, release_key, rerun_of FROM sqlanon_releases
