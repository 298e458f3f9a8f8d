-- Does the registry store reports (registries made before sqlanon stored them do not)?
SELECT COUNT(*) > 0 FROM information_schema.columns WHERE table_name = 'sqlanon_releases' AND column_name = 'report'
