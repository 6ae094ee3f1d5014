"""``np.einsum``, composed of Janus's operators: a diagonal (a repeated label within one
operand) is a product with an identity matrix summed over one axis, a label that no later term
needs is summed out, and each pair of operands is contracted by one batched matrix product
(transposes and reshapes around ``matmul``). Autograd records it and hybridize traces it like
any other call; there is no einsum operator."""
import builtins as _builtins

import numpy as _onp

from .. import _janus

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _np():
    from .. import numpy as np
    return np


def _split_term(term, subscripts, what):
    """The labels of one term: letters, and at most one '...' as the marker None."""
    labels = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "...":
                raise ValueError(f"einsum: subscripts '{subscripts}': {what} has a '.' that is "
                                 "not part of an ellipsis '...'")
            if None in labels:
                raise ValueError(f"einsum: subscripts '{subscripts}': {what} has more than one "
                                 "ellipsis '...'")
            labels.append(None)
            i += 3
            continue
        if c not in _LETTERS:
            raise ValueError(f"einsum: subscripts '{subscripts}': {what} has the character "
                             f"{c!r}, expected letters a-z, A-Z, '...', ',' and '->'")
        labels.append(c)
        i += 1
    return labels


def _parse(subscripts, shapes):
    """Each operand's labels (ellipsis axes expanded to the labels '0', '1', ..., aligned on
    the right as broadcasting does) and the output's labels."""
    s = subscripts.replace(" ", "")
    if s.count("->") > 1:
        raise ValueError(f"einsum: subscripts '{subscripts}' have more than one '->'")
    lhs, arrow, rhs = s.partition("->")
    if "-" in lhs or ">" in lhs or "-" in rhs or ">" in rhs:
        raise ValueError(f"einsum: subscripts '{subscripts}' have a '-' or '>' outside '->'")
    if "," in rhs:
        raise ValueError(f"einsum: subscripts '{subscripts}': the output (after '->') has a ','")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts '{subscripts}' name {len(terms)} operand(s), but "
                         f"{len(shapes)} were given")
    parsed = [_split_term(t, subscripts, f"operand {k} ('{t}')") for k, t in enumerate(terms)]
    n_ellipsis = 0
    for k, (labels, shape) in enumerate(zip(parsed, shapes)):
        named = len([c for c in labels if c is not None])
        if None in labels:
            if named > len(shape):
                raise ValueError(f"einsum: subscripts '{subscripts}': operand {k} "
                                 f"('{terms[k]}') names {named} axes, but it has only "
                                 f"{len(shape)} (shape {tuple(shape)})")
            n_ellipsis = _builtins.max(n_ellipsis, len(shape) - named)
        elif named != len(shape):
            raise ValueError(f"einsum: subscripts '{subscripts}': operand {k} ('{terms[k]}') "
                             f"names {named} axes, but it has {len(shape)} "
                             f"(shape {tuple(shape)})")
    ellipsis = [str(i) for i in range(n_ellipsis)]
    ops = []
    for labels, shape in zip(parsed, shapes):
        out = []
        for c in labels:
            if c is None:
                e = len(shape) - (len(labels) - 1)
                out += ellipsis[n_ellipsis - e:]
            else:
                out.append(c)
        ops.append(out)
    if arrow:
        out_terms = _split_term(rhs, subscripts, f"the output ('{rhs}')")
        seen = set()
        output = []
        for c in out_terms:
            if c is None:
                output += ellipsis
                continue
            if c in seen:
                raise ValueError(f"einsum: subscripts '{subscripts}': the output repeats the "
                                 f"label '{c}'")
            if not _builtins.any(c in labels for labels in ops):
                raise ValueError(f"einsum: subscripts '{subscripts}': the output label '{c}' "
                                 "appears in no operand")
            seen.add(c)
            output.append(c)
        if None not in out_terms and n_ellipsis:
            # NumPy's rule: axes under an ellipsis are kept unless the output sums them, which
            # it cannot name; an output without '...' is an error when they exist.
            raise ValueError(f"einsum: subscripts '{subscripts}': the operands have "
                             f"{n_ellipsis} axes under '...', but the output has no '...'")
    else:
        # Implicit output: the ellipsis axes, then the letters used once, in alphabetical order.
        counts = {}
        for labels in ops:
            for c in labels:
                if not c.isdigit():
                    counts[c] = counts.get(c, 0) + 1
        output = ellipsis + sorted(c for c, n in counts.items() if n == 1)
    return ops, output


def _diagonal(x, labels):
    """``x`` with each label that repeats within it reduced to its diagonal."""
    np = _np()
    labels = list(labels)
    while True:
        dup = next((c for i, c in enumerate(labels) if c in labels[i + 1:]), None)
        if dup is None:
            return x, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        n = x.shape[i]
        rest = [k for k in range(x.ndim) if k not in (i, j)]
        # [..., n, n] times the identity, summed over the last axis: the diagonal [..., n].
        moved = _janus.transpose(x, rest + [i, j]) if rest + [i, j] != list(range(x.ndim)) \
            else x
        eye = np.eye(n, dtype=x.dtype, ctx=x.ctx)
        x = np.sum(moved * eye, axis=-1)
        labels = [labels[k] for k in rest] + [dup]


def _sum_out(x, labels, keep):
    """``x`` summed over the axes whose labels are not in ``keep``."""
    axes = tuple(k for k, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    return _np().sum(x, axis=axes), [c for c in labels if c in keep]


def _permute(x, labels, order):
    perm = [labels.index(c) for c in order]
    return x if perm == list(range(len(perm))) else _janus.transpose(x, perm)


def _product(sizes, labels):
    n = 1
    for c in labels:
        n *= sizes[c]
    return n


def _contract(a, la, b, lb, keep):
    """The pair contracted: labels in both and in ``keep`` are batch axes, labels in both and
    not in ``keep`` are summed by the matrix product, the others stay."""
    sizes = {}
    for x, labels in ((a, la), (b, lb)):
        for c, n in zip(labels, x.shape):
            sizes[c] = _builtins.max(sizes.get(c, 1), n)
    # Broadcast axes of extent 1 (under an ellipsis) to the other operand's extent.
    a = _expand(a, la, sizes)
    b = _expand(b, lb, sizes)
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]
    a3 = _permute(a, la, batch + a_only + summed).reshape(
        (_product(sizes, batch), _product(sizes, a_only), _product(sizes, summed)))
    b3 = _permute(b, lb, batch + summed + b_only).reshape(
        (_product(sizes, batch), _product(sizes, summed), _product(sizes, b_only)))
    y = _matmul(a3, b3)
    out = batch + a_only + b_only
    return y.reshape(tuple(sizes[c] for c in out)), out


def _matmul(a, b):
    """The batched product in the operands' promoted dtype; the matrix product takes float32
    and float64 only, so integers are multiplied in float64 (exact below 2^53) and float16 and
    bfloat16 in float32, then cast back."""
    dtype = _onp.result_type(a.dtype, b.dtype)
    if dtype in (_onp.float32, _onp.float64):
        return _janus.matmul(a.astype(dtype, copy=False), b.astype(dtype, copy=False))
    work = "float32" if dtype.kind == "f" or dtype.name == "bfloat16" else "float64"
    return _janus.matmul(a.astype(work), b.astype(work)).astype(dtype)


def _expand(x, labels, sizes):
    target = tuple(sizes[c] for c in labels)
    return x if tuple(x.shape) == target else _janus.broadcast_to(x, target)


_LETTER_LIST = sorted(_LETTERS)


def _interleaved(args):
    """NumPy's other form, einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]), with
    integer labels (0 to 51) or Ellipsis in the sublists, as a subscripts string."""
    def term(sublist, where):
        out = []
        for v in sublist:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(_LETTER_LIST):
                out.append(_LETTER_LIST[v])
            else:
                raise ValueError(f"einsum: {where} has the label {v!r}, expected integers "
                                 f"0 to {len(_LETTER_LIST) - 1} or Ellipsis")
        return "".join(out)
    operands = list(args[0::2])
    sublists = list(args[1::2])
    output = None
    if len(operands) > len(sublists):
        output = operands.pop()  # an odd count: the last argument is the output's sublist
    terms = [term(sl, f"the sublist of operand {k}") for k, sl in enumerate(sublists)]
    subscripts = ",".join(terms)
    if output is not None:
        subscripts += "->" + term(output, "the output sublist")
    return subscripts, tuple(operands)


def einsum(subscripts, *operands, out=None, optimize=False, **kwargs):
    """Einstein summation over ``operands`` as NumPy's: explicit ('ij,jk->ik') or implicit
    output, '...' for broadcast axes, repeated labels within one operand for diagonals. Each
    pair of operands is contracted by one batched matrix product: from the left, or with
    ``optimize`` (True, 'greedy', 'optimal') first the pair whose result is smallest, as
    NumPy's greedy path. NumPy's interleaved form (op0, sublist0, op1, sublist1, ...,
    [sublist_out]) is accepted too."""
    np = _np()
    if out is not None:
        raise NotImplementedError("einsum: out= is not supported")
    if kwargs:
        raise TypeError(f"einsum: unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts,) + operands)
    if not operands:
        raise ValueError(f"einsum: subscripts '{subscripts}' but no operands")
    operands = [x if isinstance(x, np.ndarray) else np.array(x) for x in operands]
    ops, output = _parse(subscripts, [x.shape for x in operands])
    sizes = {}
    for k, (x, labels) in enumerate(zip(operands, ops)):
        for c, n in zip(labels, x.shape):
            m = sizes.get(c)
            if m is not None and m != n and m != 1 and n != 1:
                where = "under '...'" if c.isdigit() else f"label '{c}'"
                raise ValueError(f"einsum: subscripts '{subscripts}': {where} has extent {m} "
                                 f"in one place and {n} in operand {k} (shape {tuple(x.shape)})")
            if m is None or m == 1:
                sizes[c] = n
    terms = []
    for x, labels in zip(operands, ops):
        x, labels = _diagonal(x, labels)
        terms.append((x, labels))
    if optimize and len(terms) > 2:
        terms = _greedy(terms, output, sizes)
    # Sum out what no other term and not the output needs, then contract from the left.
    x, labels = terms[0]
    for k in range(1, len(terms) + 1):
        later = set(output)
        for _, lb in terms[k:]:
            later.update(lb)
        x, labels = _sum_out(x, labels, later)
        if k == len(terms):
            break
        b, lb = terms[k]
        keep_b = set(later) | set(labels)
        b, lb = _sum_out(b, lb, keep_b)
        after = set(output)
        for _, lc in terms[k + 1:]:
            after.update(lc)
        x, labels = _contract(x, labels, b, lb, after)
    x = _expand(x, labels, {c: sizes[c] for c in labels})
    return _permute(x, labels, output)


def _greedy(terms, output, sizes):
    """The terms reordered by contracting first, at each step, the pair whose result (the
    labels that the output or another term still needs) holds the fewest elements, so that
    no intermediate is larger than it must be; the pair's result stands in for the pair."""
    terms = list(terms)
    while len(terms) > 2:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                needed = set(output)
                for k, (_, lk) in enumerate(terms):
                    if k not in (i, j):
                        needed.update(lk)
                kept = (set(terms[i][1]) | set(terms[j][1])) & needed
                cost = _product(sizes, kept)
                if best is None or cost < best[0]:
                    best = (cost, i, j, needed)
        _, i, j, needed = best
        (a, la), (b, lb) = terms[i], terms[j]
        a, la = _sum_out(a, la, needed | set(lb))
        b, lb = _sum_out(b, lb, needed | set(la))
        pair = _contract(a, la, b, lb, needed)
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [pair]
    return terms
