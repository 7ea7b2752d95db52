"""The project's own number and date formats per locale (FORMAT_MODULE_PATH); Django's own
formats fill in everything a module here leaves out."""
