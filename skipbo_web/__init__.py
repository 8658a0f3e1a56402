"""skipbo_web: play the agents and watch saved games in a browser (``skipbo serve``).

- :mod:`skipbo_web.table`: a position as JSON, as one seat sees it (or every hand open, for replays),
  and moves told in words;
- :mod:`skipbo_web.sessions`: games in play held in memory (undo, opponents one move at a time,
  expiry, a cap), saved to the games folder as ``skipbo play`` saves them;
- :mod:`skipbo_web.replays`: the saved games of the games folder, read safely;
- :mod:`skipbo_web.guard`: what every request passes first (Host, origin, content type, length) and the
  security headers every answer carries;
- :mod:`skipbo_web.app`: the Starlette app and its JSON API; :mod:`skipbo_web.serve` the command.

Starlette and uvicorn come with the ``web`` extra: ``pip install -e '.[web]'``.
"""
