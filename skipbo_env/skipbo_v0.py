"""The retired PettingZoo name ``skipbo_v0`` (its observation had 731 or 734 values): importing it raises
``ImportError`` naming ``skipbo_v1`` (the version history is in :mod:`skipbo_env.envs.aec`)."""

from skipbo_env.envs.registration import AEC_ENV_NAME

# ImportError: ``from skipbo_env import skipbo_v0`` then shows this message
raise ImportError(f"skipbo_v0 is retired (its observation had 731 or 734 values); use {AEC_ENV_NAME}: "
                  f"from skipbo_env import {AEC_ENV_NAME}")
