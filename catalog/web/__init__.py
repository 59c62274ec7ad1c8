"""Pages: views, forms, widgets, template tags, the language middleware."""
