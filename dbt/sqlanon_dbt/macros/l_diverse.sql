{#- l_diverse (distinct l-diversity): every equivalence class (rows equal on `columns`) has at
    least l distinct values of the `sensitive` column (NULL counts as one value).

    Returns the failing classes with class_size and distinct_sensitive. Rows whose every column
    is the suppression_marker (sqlanon's '*') are suppressed rows, not a class, and are left out.

      models:
        - name: patients_k5
          data_tests:
            - sqlanon_dbt.l_diverse:
                arguments: {columns: [zip, age, sex], sensitive: diagnosis, l: 2, suppression_marker: "*"}
-#}
{% test l_diverse(model, columns, sensitive, l, suppression_marker=none, quote_columns=false) %}
{%- set cols = sqlanon_dbt._columns(columns, quote_columns) -%}
{%- set l = sqlanon_dbt._positive_int(l, 'l') -%}
{%- if sensitive is none or sensitive is not string -%}
  {{ exceptions.raise_compiler_error("sqlanon_dbt.l_diverse: give the sensitive column (sensitive: diagnosis)") }}
{%- endif -%}
{%- set s = adapter.quote(sensitive) if quote_columns else sensitive %}
with classes as (
    select
        {% for c in cols %}{{ c }},
        {% endfor %}count(*) as class_size,
        {{ sqlanon_dbt._distinct_with_null(s) }} as distinct_sensitive,
        {{ sqlanon_dbt._suppressed_flag(cols, suppression_marker) }} as is_suppressed
    from {{ model }}
    group by {{ cols | join(', ') }}
)
select
    {% for c in cols %}{{ c }},
    {% endfor %}class_size,
    distinct_sensitive
from classes
where is_suppressed = 0 and distinct_sensitive < {{ l }}
{% endtest %}
