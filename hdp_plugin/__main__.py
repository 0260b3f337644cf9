"""``python -m hdp_plugin`` runs the ``hdp-bnc`` command line."""

from .cli import main

if __name__ == "__main__":
    main()
