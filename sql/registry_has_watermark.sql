-- Does the registry store the partition watermark of dbt incremental models?
SELECT COUNT(*) > 0 FROM information_schema.columns WHERE table_name = 'sqlanon_releases' AND column_name = 'watermark'
