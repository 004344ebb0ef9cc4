"""The ``ambry`` command line: one composition root, one module per group of commands.

Owns: the command registry and shared formatting (``context``), the parser and ``main``
(``main``), the log file (``logfile``), the Qt system-library check (``qtlibs``), and
the commands (``memory``, ``recall``, ``review``, ``data``, ``history``,
``continuity``, ``attachments``, ``semantic``, ``claims``, ``trash``, ``agent``,
``doctor``, ``setup``, ``completion``), registered by importing ``commands``.
May import: everything in ``core``. It reaches ``desktop`` only from inside the functions
that start the GUI, the self-test and the headless server, so ``import core.cli.main``
never loads Qt (the import-linter contracts in pyproject.toml list those three imports).
"""
