"""The console scripts: thin argument parsing over the library; errors mapped in `common`."""
