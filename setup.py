"""The packages of the wheel (the rest of the project's metadata is pyproject.toml): the project's packages, and the
shipped training configs, ``configs/`` at the repository root, installed as ``training/configs`` so that
``skipbo train quickstart`` finds them without a checkout (``training.config.shipped_configs``)."""

from setuptools import find_namespace_packages, setup

setup(
    # namespace packages too, so the data folders (agents/pretrained, skipbo_web/static) are packages of their own
    # and setuptools has nothing to warn about
    packages=[*find_namespace_packages(include=["skipbo_env*", "agents*", "training*", "evaluation*", "skipbo_cli*",
                                                "skipbo_web*"], exclude=["*.__pycache__"]), "training.configs"],
    package_dir={"training.configs": "configs"},
)
