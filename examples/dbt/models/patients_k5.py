"""A dbt-duckdb Python model: 5-anonymize the `patients` seed inside the dbt database.

sqlanon runs on dbt's own DuckDB connection (`session`), reads the upstream table by name, writes
its release as a table in the same database (recorded in `sqlanon_releases` there) and the model
returns it. Hierarchies: zip codes masked digit by digit, ages in 5/10/20-year bands.
"""


def model(dbt, session):
    import sqlanon

    dbt.config(materialized="table")
    upstream = dbt.ref("patients")  # declares the dependency; sqlanon reads the table itself
    del upstream
    sqlanon.anonymize(
        connection=session,
        table="patients",
        qi={"zip": "mask", "age": "bands:5,10,20", "sex": "flat"},
        k=5,
        max_suppression=0.05,
        metric="lm",
        output_table="patients_k5_release",
        overwrite=True,
    )
    return session.table("patients_k5_release")
