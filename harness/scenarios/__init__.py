"""Built-in scenario files (*.yaml) and the live run that plays them."""
