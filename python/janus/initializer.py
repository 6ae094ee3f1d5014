"""``init``: how parameters get their first values (MXNet's initializer names). Each draws from
the seeded generator, so a model initialised after the same ``mx.random.seed`` starts the same."""
from . import _janus

Initializer = _janus.Initializer


def Xavier(rnd_type="uniform", factor_type="avg", magnitude=3):
    return _janus.init_xavier(rnd_type, factor_type, float(magnitude))


def Normal(sigma=0.01):
    return _janus.init_normal(float(sigma))


def Uniform(scale=0.07):
    return _janus.init_uniform(float(scale))


def Zero():
    return _janus.init_zero()


def One():
    return _janus.init_one()


def Constant(value):
    return _janus.init_constant(float(value))
