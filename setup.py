"""The packages of the wheel (the rest of the project's metadata is pyproject.toml): the project's packages, and the
shipped training configs, ``configs/`` at the repository root, installed as ``training/configs`` so that
``skipbo train quickstart`` finds them without a checkout (``training.config.shipped_configs``)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["skipbo_env*", "agents*", "training*", "evaluation*", "skipbo_cli*",
                                      "skipbo_web*"]), "training.configs"],
    package_dir={"training.configs": "configs"},
)
