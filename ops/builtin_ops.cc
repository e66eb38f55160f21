namespace kiln {} // placeholder
