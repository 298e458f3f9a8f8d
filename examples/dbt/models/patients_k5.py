"""A dbt-duckdb Python model: 5-anonymize the `patients` seed inside the dbt database.

`dbt.ref("patients")` is a DuckDB relation on dbt's own connection (`session`). sqlanon plans on
it there and returns the release as a lazy relation; dbt materializes it once, into this model's
own table (in the target's schema, e.g. `analytics.patients_k5`). The release is recorded in
`sqlanon_releases` (target `relation`). Hierarchies: zip codes masked digit by digit, ages in
5/10/20-year bands, sex flat. The seed's `id` is left out: kept, it would join every released row
back to its patient (sqlanon refuses a release that keeps a column unique per row); the
diagnosis is kept as it is (every column has a role: a column no role names is refused).
"""


def model(dbt, session):
    import sqlanon
    from sqlanon import KAnonymity, bands, flat, mask

    dbt.config(materialized="table")
    release = sqlanon.anonymize(
        dbt.ref("patients"),
        connection=session,
        qi={"zip": mask(), "age": bands(5, 10, 20), "sex": flat()},
        privacy=[KAnonymity(5)],
        max_suppression=0.05,
        metric="lm",
        drop_columns=["id"],
        keep_columns=["diagnosis"],
    )
    return release.relation()
