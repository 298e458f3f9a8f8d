{#- k_anonymous: every equivalence class (rows equal on `columns`) has at least k rows.

    Returns the failing classes: their column values and class_size (and total_rows). With a
    suppression_marker (sqlanon's is '*'), the rows whose every column is the marker are the
    suppressed rows: they are not a class, and, with max_suppression (a share of all rows,
    0..1), they fail the test as one row when there are more than max_suppression * total_rows.

      models:
        - name: patients_k5
          data_tests:
            - sqlanon_dbt.k_anonymous:
                arguments: {columns: [zip, age, sex], k: 5, suppression_marker: "*", max_suppression: 0.05}
-#}
{% test k_anonymous(model, columns, k, suppression_marker=none, max_suppression=none, quote_columns=false) %}
{%- set cols = sqlanon_dbt._columns(columns, quote_columns) -%}
{%- set k = sqlanon_dbt._positive_int(k, 'k') -%}
{%- if max_suppression is not none -%}
  {%- if suppression_marker is none -%}
    {{ exceptions.raise_compiler_error("sqlanon_dbt.k_anonymous: max_suppression needs suppression_marker (the value sqlanon masks suppressed rows with, '*')") }}
  {%- endif -%}
  {%- if max_suppression is string or max_suppression is boolean or max_suppression < 0 or max_suppression > 1 -%}
    {{ exceptions.raise_compiler_error("sqlanon_dbt.k_anonymous: max_suppression is a share of the rows, 0 to 1, got " ~ max_suppression) }}
  {%- endif -%}
{%- endif %}
with classes as (
    select
        {% for c in cols %}{{ c }},
        {% endfor %}count(*) as class_size,
        {{ sqlanon_dbt._suppressed_flag(cols, suppression_marker) }} as is_suppressed
    from {{ model }}
    group by {{ cols | join(', ') }}
),
totals as (
    select count(*) as total_rows from {{ model }}
)
select
    {% for c in cols %}classes.{{ c }},
    {% endfor %}classes.class_size,
    classes.is_suppressed,
    totals.total_rows
from classes
cross join totals
where (classes.is_suppressed = 0 and classes.class_size < {{ k }})
{%- if max_suppression is not none %}
   or (classes.is_suppressed = 1 and classes.class_size > {{ max_suppression }} * totals.total_rows)
{%- endif %}
{% endtest %}
