"""``gluon.model_zoo``: MXNet 1.9's model zoo (``vision``): the image classifiers, built from
Janus's layers with MXNet's structure, so that their parameter files load into them."""
from . import model_store, vision  # noqa: F401
