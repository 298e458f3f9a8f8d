{#- Shared pieces of sqlanon_dbt's generic tests. Portable SQL: dbt's cross-db macros
    (dbt.cast, dbt.type_string, dbt.string_literal) and plain GROUP BY / COUNT / CASE. -#}

{#- The column list of a test: one name or a list; quoted with the adapter's quoting when
    quote_columns is true (names with spaces, or case-sensitive names on Snowflake). -#}
{% macro _columns(columns, quote_columns=false, arg='columns') %}
  {%- if columns is string -%}{%- set columns = [columns] -%}{%- endif -%}
  {%- if columns is none or columns | length == 0 -%}
    {{ exceptions.raise_compiler_error("sqlanon_dbt: give the quasi-identifier columns (" ~ arg ~ ": [zip, age, ...])") }}
  {%- endif -%}
  {%- set out = [] -%}
  {%- for c in columns -%}
    {%- do out.append(adapter.quote(c) if quote_columns else c) -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}

{#- A positive whole number (k, l), checked at compile time. -#}
{% macro _positive_int(value, name) %}
  {%- if value is none or value is string or value is boolean or (value | int) != value or value < 1 -%}
    {{ exceptions.raise_compiler_error("sqlanon_dbt: " ~ name ~ " must be a whole number >= 1, got " ~ value) }}
  {%- endif -%}
  {{ return(value | int) }}
{% endmacro %}

{#- 1 when every column of the (grouped) row equals the suppression marker, else 0: sqlanon masks
    a suppressed row's quasi-identifiers with the marker ('*' by default). NULL is not the marker. -#}
{% macro _suppressed_flag(cols, marker) %}
  {%- if marker is none -%}0{%- else -%}
  case when {% for c in cols %}{{ dbt.cast(c, dbt.type_string()) }} = {{ dbt.string_literal(marker) }}{% if not loop.last %} and {% endif %}{% endfor %} then 1 else 0 end
  {%- endif -%}
{% endmacro %}

{#- The number of distinct values of an expression in a group, NULL counting as one value
    (NULL is a value, as in sqlanon). -#}
{% macro _distinct_with_null(expr) %}
  (count(distinct {{ expr }}) + max(case when {{ expr }} is null then 1 else 0 end))
{% endmacro %}
