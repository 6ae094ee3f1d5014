"""``model_store``: where pretrained parameters come from. There is no network here: a
pretrained model loads ``root/NAME-*.params`` (MXNet's file name, NAME-HASH.params, as its
``model_store`` leaves it in ``$MXNET_HOME/models``) and never downloads one."""
import glob as _glob
import os as _os


def default_root():
    """MXNet's folder of pretrained parameters: ``$MXNET_HOME/models`` (``~/.mxnet/models``)."""
    return _os.path.join(_os.environ.get("MXNET_HOME", _os.path.join("~", ".mxnet")), "models")


def get_model_file(name, root=None):
    """The path of the parameter file of model ``name`` in ``root``: the one file named
    ``NAME-*.params`` there. FileNotFoundError (saying where to put it) when there is none,
    ValueError when there are several."""
    root = _os.path.expanduser(default_root() if root is None else root)
    pattern = _os.path.join(_glob.escape(root), _glob.escape(name) + "-*.params")
    found = sorted(_glob.glob(pattern))
    if not found:
        raise FileNotFoundError(
            f"model_zoo: no pretrained parameters for '{name}': expected a file "
            f"'{_os.path.join(root, name)}-*.params' (pretrained models cannot be downloaded "
            "here; copy MXNet's file, e.g. from ~/.mxnet/models of a machine that has it, into "
            "that folder or pass its folder as root)")
    if len(found) > 1:
        raise ValueError(f"model_zoo: several pretrained parameter files for '{name}' in "
                         f"'{root}': {', '.join(_os.path.basename(f) for f in found)}; keep one")
    return found[0]


def load_pretrained(net, name, ctx=None, root=None):
    """``net`` with the parameters of ``root/NAME-*.params`` loaded (on ``ctx``)."""
    net.load_parameters(get_model_file(name, root), ctx=ctx)
    return net
