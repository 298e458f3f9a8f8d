-- Does the registry store run keys (model_id, invocation_id, release_key, rerun_of)?
SELECT COUNT(*) > 0 FROM information_schema.columns WHERE table_name = 'sqlanon_releases' AND column_name = 'rerun_of'
