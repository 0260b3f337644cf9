"""``python -m hdp_plugin.daemon run SPOOL ...``: the daemon's commands without the main CLI."""

from ..cli.daemon import main

if __name__ == "__main__":
    main()
