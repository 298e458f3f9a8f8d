"""A dbt-duckdb Python model: 5-anonymize the `patients` seed inside the dbt database, by the
policy in the model's config (`meta: sqlanon:` in models/schema.yml: a policy file and keys).

`dbt.ref("patients")` is a DuckDB relation on dbt's own connection (`session`). sqlanon plans on
it there and returns the release as a lazy relation; dbt materializes it once, into this model's
own table. The release is recorded in `sqlanon_releases` with the model's unique id and the
run's invocation id; running the unchanged model again is recorded as a re-run of that release.
"""


def model(dbt, session):
    from sqlanon.dbt import anonymize_model

    return anonymize_model(dbt, session, dbt.ref("patients"), dbt.config.get("meta"))
