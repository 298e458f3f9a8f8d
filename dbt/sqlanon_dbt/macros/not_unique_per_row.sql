{#- not_unique_per_row: a column test that fails when the column is unique per row (an id, a
    timestamp to the second): released, it joins every row back to its person, whatever the
    other columns' generalization. NULL counts as one value. With max_share below 1, it also
    fails when the column is nearly unique: distinct values above max_share * rows.

    Returns one row when it fails: the column's name, row_count and distinct_values.

      models:
        - name: patients_k5
          columns:
            - name: diagnosis
              data_tests:
                - sqlanon_dbt.not_unique_per_row
-#}
{% test not_unique_per_row(model, column_name, max_share=1) %}
{%- if max_share is string or max_share is boolean or max_share <= 0 or max_share > 1 -%}
  {{ exceptions.raise_compiler_error("sqlanon_dbt.not_unique_per_row: max_share is a share of the rows, above 0 and at most 1, got " ~ max_share) }}
{%- endif %}
with counts as (
    select
        count(*) as row_count,
        {{ sqlanon_dbt._distinct_with_null(column_name) }} as distinct_values
    from {{ model }}
)
select
    {{ dbt.string_literal(column_name) }} as column_name,
    row_count,
    distinct_values
from counts
where row_count > 0
  and distinct_values {{ '>=' if max_share == 1 else '>' }} {{ max_share }} * row_count
{% endtest %}
