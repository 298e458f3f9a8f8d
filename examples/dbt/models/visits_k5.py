"""A dbt-duckdb incremental Python model: the visits, 5-anonymized a day at a time.

The first run (and every `dbt run --full-refresh`) anonymizes every visit that has arrived and
starts a lineage. Every later run (`dbt.is_incremental`) releases only the visits whose `day` is
above the lineage's watermark, with the first release's transformation (the same generalized
values), and dbt appends them. Rows whose class would stay under k over the whole table are
handled by `on_break` (here: suppressed). All of it is the model's `meta: sqlanon:` config in
models/schema.yml (`incremental: {on_break: suppress, partition_column: day}`).
"""


def model(dbt, session):
    from sqlanon.dbt import anonymize_model

    return anonymize_model(dbt, session, dbt.ref("visits_arrived"), dbt.config.get("meta"))
