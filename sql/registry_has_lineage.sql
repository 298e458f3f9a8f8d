-- Does the registry have the lineage columns (added by the first incremental release)?
SELECT COUNT(*) > 0 FROM information_schema.columns WHERE table_name = 'sqlanon_releases' AND column_name = 'lineage_root'
