"""The ``skipbo`` command line and its terminal views: one module per subcommand (see :mod:`.main`)."""
