"""A hospital-admissions table shaped like production warehouse data, built by SQL in DuckDB.

Used by ``bench/warehouse.py`` and by the tests of issue 41 (``tests/profiling/test_warehouse_profile.py``). Every
value comes from a hash of the row number, so the same ``rows`` and ``seed`` give the same table.

Columns (and what makes them hard):

* ``patient_id`` BIGINT, unique per row; ``full_name``, ``email``, ``ssn`` (text identifiers; the
  SSN is *nearly* unique: a few repeats, as typing errors make);
* ``dob`` DATE, 1930-2015, a few percent NULL;
* ``zip`` VARCHAR, 5 digits with leading zeros (``'01234'``), about 30K values at 200K rows, skewed
  (a power law over the zips), a few percent NULL; ``city`` and ``state`` follow from the zip
  (about 5K cities, 50 states; a state is a block of zip3 prefixes, as real ones nearly are;
  some city names repeat across states);
* ``gender`` VARCHAR (``F``, ``M``, rarely ``X``), a few percent NULL;
* ``ethnicity`` VARCHAR, 6 values, skewed;
* ``diagnosis`` VARCHAR, an ICD-10 code (``'E11.9'``), and ``diagnosis_chapter`` (its letter and
  chapter, a function of the code);
* ``admitted_at`` TIMESTAMP, 2020-2025, with repeats (admissions come in on the hour);
* ``charges`` DECIMAL(10,2);
* ``note`` free text.

    python bench/warehouse_table.py --rows 200000 --out bench/out/warehouse_200k.duckdb
"""

from __future__ import annotations

import argparse
import os

import duckdb

TABLE = "admissions"

#: the generating query; $rows is bound by DuckDB, the seed is an integer in the macro h (no text is pasted into it)
QUERY = r"""
WITH
zips AS (
    -- about 0.15 zips per row (30K at 200K rows), at most 90K; sorted, so each state's zips are a block
    -- a state is a block of 2,000 zip numbers (its zip3 prefixes are its own, as real ones
    -- nearly are), a city about 6 zips of one state
    SELECT zip_rank, lpad(CAST(zip_num AS VARCHAR), 5, '0') AS zip,
           CAST(dense_rank() OVER (ORDER BY zip_num // 2000, zip_rank // 6) - 1 AS BIGINT) AS city_id
    FROM (SELECT z AS zip_rank, (z * 99991) // greatest(1, least(90000, CAST($rows * 0.15 AS BIGINT))) AS zip_num
          FROM range(greatest(1, least(90000, CAST($rows * 0.15 AS BIGINT)))) t(z))
),
city_states AS (SELECT DISTINCT city_id, CAST(min(zip) OVER (PARTITION BY city_id) AS INTEGER) // 2000 AS state_id FROM zips),
cities AS (
    SELECT city_id,
           -- a few names repeat in other states (Springfield, ...)
           CASE WHEN city_id % 97 = 0 THEN 'Springfield'
                WHEN city_id % 89 = 0 THEN 'Franklin'
                ELSE concat(['North ', 'South ', 'East ', 'West ', '', '', '', ''][1 + city_id % 8],
                            ['Oak', 'Pine', 'Maple', 'Cedar', 'Elm', 'Birch', 'Ash', 'Willow', 'Lake', 'River'][1 + (city_id // 8) % 10],
                            ['ville', 'ton', ' City', 'field', 'burg', 'port', ' Falls', 'wood'][1 + (city_id // 80) % 8],
                            CAST(city_id // 640 AS VARCHAR))
           END AS city,
           state_id
    FROM city_states
),
states AS (
    SELECT i AS state_id, s AS state FROM (
        SELECT unnest(range(50)) AS i,
               unnest(['AL','AK','AZ','AR','CA','CO','CT','DE','FL','GA','HI','ID','IL','IN','IA','KS','KY','LA','ME','MD',
                       'MA','MI','MN','MS','MO','MT','NE','NV','NH','NJ','NM','NY','NC','ND','OH','OK','OR','PA','RI','SC',
                       'SD','TN','TX','UT','VT','VA','WA','WV','WI','WY']) AS s)
),
places AS (
    SELECT zips.zip_rank, zips.zip, cities.city, states.state
    FROM zips JOIN cities USING (city_id) JOIN states USING (state_id)
),
nz AS (SELECT count(*) AS n FROM zips),
base AS (
    SELECT i,
           h(i, 1) AS h1, h(i, 2) AS h2, h(i, 3) AS h3, h(i, 4) AS h4,
           h(i, 5) AS h5, h(i, 6) AS h6, h(i, 7) AS h7, h(i, 8) AS h8
    FROM range($rows) t(i)
),
rows AS (
    SELECT i, h1, h2, h3, h4, h5, h6, h7, h8,
           -- a power law over the zips (popularity rank = n * u^3), the popular ones spread over the zips
           (CAST(floor((SELECT n FROM nz) * pow((h1 % 1000003) / 1000003.0, 3)) AS BIGINT) * 7919) % (SELECT n FROM nz) AS zip_rank
    FROM base
)
SELECT
    CAST(1000000 + i AS BIGINT) AS patient_id,
    concat(['Ana','Ben','Chen','Dana','Eli','Fatima','Gus','Hana','Ivan','Jo','Kofi','Lena','Mo','Nia','Omar','Pia'][1 + h2 % 16], ' ',
           ['Smith','Jones','Garcia','Brown','Lee','Wilson','Martin','Nguyen','Khan','Lopez','Clark','Young','Hall','Allen','King','Wright',
            'Scott','Green','Baker','Adams','Nelson','Hill','Ramirez','Campbell','Mitchell','Roberts','Carter','Phillips','Evans','Turner'][1 + h3 % 30]) AS full_name,
    concat('p', CAST(1000000 + i AS VARCHAR), '@', ['example.com', 'mail.test', 'inbox.test'][1 + h4 % 3]) AS email,
    -- nearly unique: one row in 200 copies the SSN of the row before it
    CASE WHEN h5 % 200 = 0 AND i > 0 THEN
              concat(lpad(CAST(100 + (h(i - 1, 9) % 800) AS VARCHAR), 3, '0'), '-', lpad(CAST(h(i - 1, 10) % 100 AS VARCHAR), 2, '0'), '-',
                     lpad(CAST(h(i - 1, 11) % 10000 AS VARCHAR), 4, '0'))
         ELSE concat(lpad(CAST(100 + (h(i, 9) % 800) AS VARCHAR), 3, '0'), '-', lpad(CAST(h(i, 10) % 100 AS VARCHAR), 2, '0'), '-',
                     lpad(CAST(h(i, 11) % 10000 AS VARCHAR), 4, '0'))
    END AS ssn,
    CASE WHEN h6 % 100 < 3 THEN NULL ELSE DATE '1930-01-01' + CAST(h6 % 31000 AS INTEGER) END AS dob,
    CASE WHEN h7 % 100 < 2 THEN NULL ELSE places.zip END AS zip,
    CASE WHEN h7 % 100 < 2 THEN NULL ELSE places.city END AS city,
    CASE WHEN h7 % 100 < 2 THEN NULL ELSE places.state END AS state,
    CASE WHEN h8 % 100 < 2 THEN NULL WHEN h8 % 1000 < 25 THEN 'X' WHEN h8 % 2 = 0 THEN 'F' ELSE 'M' END AS gender,
    ['White', 'White', 'White', 'Black', 'Black', 'Hispanic', 'Hispanic', 'Asian', 'Native', 'Other'][1 + (h2 // 16) % 10] AS ethnicity,
    concat(['A','B','C','E','E','F','I','I','J','K','M','N','R','S','Z'][1 + (h3 // 30) % 15],
           lpad(CAST((h4 // 3) % 100 AS VARCHAR), 2, '0'), '.', CAST((h4 // 300) % 10 AS VARCHAR)) AS diagnosis,
    ['A-B infectious', 'A-B infectious', 'C-D neoplasms', 'E endocrine', 'E endocrine', 'F mental', 'I circulatory', 'I circulatory',
     'J respiratory', 'K digestive', 'M musculoskeletal', 'N genitourinary', 'R symptoms', 'S-T injury', 'Z factors'][1 + (h3 // 30) % 15] AS diagnosis_chapter,
    TIMESTAMP '2020-01-01 00:00:00' + to_hours(CAST((h5 // 7) % 52584 AS BIGINT)) AS admitted_at,
    CAST(((h1 // 7) % 5000000) / 100.0 AS DECIMAL(10, 2)) AS charges,
    concat('Patient seen for ', ['follow-up', 'chest pain', 'fever', 'a fall', 'a check-up', 'shortness of breath'][1 + (h6 // 31000) % 6],
           '; ', ['no complications', 'referred', 'admitted overnight', 'discharged'][1 + (h8 // 1000) % 4], '.') AS note
FROM rows JOIN places USING (zip_rank)
"""

#: the columns that follow from another column, and the column they follow from
LINKED = {"city": "zip", "state": "zip", "diagnosis_chapter": "diagnosis"}
IDENTIFIERS = ["patient_id", "full_name", "email", "ssn"]


def build(con: duckdb.DuckDBPyConnection, rows: int, seed: int = 7, table: str = TABLE) -> None:
    """(Re)creates ``table`` on ``con`` with ``rows`` rows."""
    # h(i, j): the j-th pseudo-random non-negative BIGINT of row i
    con.execute("CREATE OR REPLACE TEMP MACRO h(i, j) AS CAST(hash(i, $seed, j) >> 2 AS BIGINT)".replace("$seed", str(int(seed))))
    con.execute("DROP TABLE IF EXISTS " + duckdb_ident(table))
    con.execute("CREATE TABLE " + duckdb_ident(table) + " AS " + QUERY, {"rows": rows})


def duckdb_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def to_postgres(con: duckdb.DuckDBPyConnection, uri: str, table: str = TABLE) -> None:
    """Copies the table to PostgreSQL at ``uri`` (psycopg, COPY FROM STDIN)."""
    import psycopg

    cols = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]).fetchall()
    pg_type = {"BIGINT": "bigint", "VARCHAR": "text", "DATE": "date", "TIMESTAMP": "timestamp", "DECIMAL(10,2)": "numeric(10,2)"}
    with psycopg.connect(uri, autocommit=True) as pg:
        pg.execute("DROP TABLE IF EXISTS " + duckdb_ident(table))
        pg.execute("CREATE TABLE " + duckdb_ident(table) + " (" + ", ".join(duckdb_ident(c) + " " + pg_type[t] for c, t in cols) + ")")
        reader = con.execute("SELECT * FROM " + duckdb_ident(table)).to_arrow_reader(50_000)
        with pg.cursor() as cur, cur.copy("COPY " + duckdb_ident(table) + " FROM STDIN") as copy:
            for batch in reader:
                for row in zip(*(c.to_pylist() for c in batch.columns)):
                    copy.write_row(row)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", required=True, help="a .duckdb file to write the table into")
    args = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with duckdb.connect(args.out) as con:
        build(con, args.rows, args.seed)
        print(con.execute("SELECT count(*), count(DISTINCT zip), count(DISTINCT city), count(DISTINCT state), count(*) - count(zip) FROM " + TABLE).fetchall())


if __name__ == "__main__":
    main()
