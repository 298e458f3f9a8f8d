"""SQL atoms (:mod:`sqlanon.expr.atoms`) and fixed-shape statement templates (:mod:`sqlanon.expr.templates`)."""
