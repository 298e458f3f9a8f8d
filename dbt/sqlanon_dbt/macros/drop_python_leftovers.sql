{#- A post-hook for a dbt-duckdb incremental Python model:
        post_hook: "{{ sqlanon_dbt.drop_python_leftovers() }}"
    dbt-duckdb 1.11 writes what a Python incremental run returns to `<model>__dbt_tmp<time>` as a
    plain table (not a temporary one) and leaves it behind, one per run; this drops the model's
    such tables (in its schema, names starting with `<model>__dbt_tmp`). Renders no SQL. -#}
{% macro drop_python_leftovers() %}
  {%- if execute and model.language == 'python' -%}
    {%- set prefix = (this.identifier ~ '__dbt_tmp') | lower -%}
    {%- set query -%}
      select table_name from information_schema.tables
      where table_catalog = {{ dbt.string_literal(this.database) }} and table_schema = {{ dbt.string_literal(this.schema) }}
    {%- endset -%}
    {%- for name in run_query(query).columns[0].values() -%}
      {%- if name.lower().startswith(prefix) -%}
        {%- do adapter.drop_relation(api.Relation.create(database=this.database, schema=this.schema, identifier=name, type='table')) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
{% endmacro %}
