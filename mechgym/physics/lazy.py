"""Named tuples passed by reference into a packed block (``Lazy``): compiled code reads a member where it uses it.

A compiled call that is not inlined receives each array of a named tuple argument as its pointers, size, shape
and strides, most of them on the stack: a contact stage handed the contact set, its scratch and the workspaces
receives several thousand numbers, whatever few arrays it reads (about 2,000 cycles a call on a box resting on a
plane, a fifth of its step). The engine's arguments are packed once per simulator into an int64 block
(``dispatch.Packed``: each array's data address and shape, each scalar's bits), which nothing writes while the
engine runs. ``unpack_lazy(block, kind)`` gives each named tuple of the block as a ``Lazy``: one pointer to where
its members start in the block, typed by the named tuple's type, so a call passes one number for it. Its
attribute is read from the block at a constant offset when it is used: an array from its address and shape (C
strides), a scalar from its bits, a nested named tuple as a ``Lazy`` again. The reads are marked invariant
(``!invariant.load``), so LLVM may hoist them out of loops and merge repeated reads despite the stores around
them. ``whole(x)`` is the named tuple itself (every member read), for code that iterates over its members; on
anything but a ``Lazy`` it is ``x``.

Under ``NUMBA_DISABLE_JIT`` the block is the tuple of objects itself (``dispatch.Packed``): ``unpack_lazy`` returns
it and ``whole`` is the identity.
"""

from __future__ import annotations

from itertools import count

from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.core.extending import intrinsic, models, register_model
from numba.core.imputils import lower_getattr_generic
from numba.core.typing.templates import AttributeTemplate, infer_getattr
from numba.np.arrayobj import populate_array


class Lazy(types.Type):
    """A named tuple of type ``kind`` read from a packed block where its members are used (module docstring)."""

    def __init__(self, kind) -> None:
        self.kind = kind
        super().__init__(name=f"Lazy({kind})")


register_model(Lazy)(models.OpaqueModel)  # (an i8*: the block's address of the named tuple's first entry)


def slots(kind) -> int:
    """The int64 entries of the block that a value of type ``kind`` takes (``dispatch._packed``'s order): an array
    its address and one per dimension, a scalar one, a tuple its members'."""
    if isinstance(kind, types.BaseTuple):
        return sum(slots(item) for item in kind.types)
    return 1 + kind.ndim if isinstance(kind, types.Array) else 1


def require_c_arrays(kind) -> None:
    """Refuse a packed type ``kind`` with an array that numba did not type C-contiguous (the block holds no strides)."""
    if not all(isinstance(array, types.Array) and array.layout == "C" for array in _arrays(kind)):
        raise TypeError(f"every packed array must be C-contiguous ({kind})")


def _arrays(kind):
    """The array types in the (nested) tuple type ``kind``."""
    if isinstance(kind, types.BaseTuple):
        return [array for item in kind.types for array in _arrays(item)]
    return [kind] if isinstance(kind, types.Array) else []


def _member(kind):
    """The type compiled code sees for a member of type ``kind`` read from a block."""
    return Lazy(kind) if isinstance(kind, types.BaseNamedTuple) else kind


def read_value(context, builder, kind, entries):
    """The value of type ``kind`` from the block's int64 entries at ``entries`` (an i64*), read in order: each
    array's data pointer and shape (strides those of a C-contiguous array; no reference counting: the ``Packed``
    keeps the arrays alive), each scalar from its bits, a tuple member by member. The reads are invariant loads."""
    position = count()
    invariant = builder.module.add_metadata([])

    def read():
        load = builder.load(builder.gep(entries, [context.get_constant(types.intp, next(position))]))
        load.set_metadata("invariant.load", invariant)
        return load

    def build(kind):
        if isinstance(kind, types.Array):
            element = context.get_data_type(kind.dtype)
            pointer = builder.inttoptr(read(), element.as_pointer())
            shape = [read() for _ in range(kind.ndim)]
            itemsize = context.get_constant(types.intp, context.get_abi_sizeof(element))
            strides = [itemsize] * kind.ndim  # C order: stride[k] = itemsize * shape[k+1] * ... * shape[-1]
            for axis in range(kind.ndim - 2, -1, -1):
                strides[axis] = builder.mul(strides[axis + 1], shape[axis + 1])
            array = context.make_array(kind)(context, builder)
            populate_array(array, data=pointer, shape=cgutils.pack_array(builder, shape),
                           strides=cgutils.pack_array(builder, strides), itemsize=itemsize, meminfo=None)
            return array._getvalue()
        if isinstance(kind, types.BaseTuple):
            return context.make_tuple(builder, kind, [build(item) for item in kind.types])
        if isinstance(kind, types.Boolean):
            return builder.icmp_signed("!=", read(), context.get_constant(types.int64, 0))
        if isinstance(kind, types.Float):
            return context.cast(builder, builder.bitcast(read(), context.get_value_type(types.float64)),
                                types.float64, kind)
        if isinstance(kind, types.Integer):
            return context.cast(builder, read(), types.int64, kind)
        raise TypeError(f"cannot read a {kind} from a packed block")

    return build(kind)


def _entries(builder, lazy):
    """A ``Lazy``'s i8* as the i64* of its block entries."""
    return builder.bitcast(lazy, ir.IntType(64).as_pointer())


def _read_member(context, builder, kind, entries):
    """A member of type ``kind`` at ``entries``: a named tuple as a ``Lazy`` (its address), else its value."""
    if isinstance(kind, types.BaseNamedTuple):
        return builder.bitcast(entries, cgutils.voidptr_t)
    return read_value(context, builder, kind, entries)


@infer_getattr
class _LazyAttributes(AttributeTemplate):
    key = Lazy

    def generic_resolve(self, lazy, attr):
        fields = lazy.kind.fields
        if attr in fields:
            return _member(lazy.kind.types[fields.index(attr)])
        return None


@lower_getattr_generic(Lazy)
def _lazy_attribute(context, builder, typ, value, attr):
    kind = typ.kind
    index = kind.fields.index(attr)
    offset = sum(slots(item) for item in kind.types[:index])
    entries = builder.gep(_entries(builder, value), [context.get_constant(types.intp, offset)])
    return _read_member(context, builder, kind.types[index], entries)


@intrinsic
def _unpack_lazy(typingctx, block, kind):
    """``unpack_lazy(block, kind)`` in compiled code: the tuple of type ``kind`` that ``dispatch._packed`` wrote into
    the int64 array ``block``, its named tuples as ``Lazy`` (the addresses where their entries start)."""
    target = kind.instance_type
    require_c_arrays(target)
    members = types.Tuple([_member(item) for item in target.types])

    def codegen(context, builder, signature, args):
        entries = context.make_array(signature.args[0])(context, builder, args[0]).data
        values, offset = [], 0
        for item in target.types:
            at = builder.gep(entries, [context.get_constant(types.intp, offset)])
            values.append(_read_member(context, builder, item, at))
            offset += slots(item)
        return context.make_tuple(builder, members, values)

    return members(block, kind), codegen


@intrinsic
def _whole(typingctx, value):
    """``whole(x)`` in compiled code: a ``Lazy``'s named tuple with every member read, anything else itself."""
    if not isinstance(value, Lazy):
        return value(value), lambda context, builder, signature, args: args[0]

    def codegen(context, builder, signature, args):
        return read_value(context, builder, value.kind, _entries(builder, args[0]))

    return value.kind(value), codegen


def as_it_is(value, kind=None):
    """``unpack_lazy``, ``whole`` and ``dispatch.unpack`` in numba's debugging mode (``NUMBA_DISABLE_JIT``), where a
    packed block is the tuple of objects itself and no named tuple is a ``Lazy``: ``value`` itself."""
    return value


unpack_lazy = as_it_is if config.DISABLE_JIT else _unpack_lazy
whole = as_it_is if config.DISABLE_JIT else _whole
