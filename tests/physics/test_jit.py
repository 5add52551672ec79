"""mechgym.physics.jit: kernels are compiled once per argument type, not once per literal constant."""

from numba import njit

from mechgym.physics.jit import kernel


def test_a_kernel_called_with_different_constants_is_compiled_once():
    @kernel
    def scaled(x, flag, index):
        return x * (index + 1) if flag else -x

    @kernel(literal_arguments=True)
    def scaled_per_constant(x, flag, index):
        return x * (index + 1) if flag else -x

    @njit
    def caller(x):
        return (scaled(x, True, 0) + scaled(x, False, 3) + scaled_per_constant(x, True, 0)
                + scaled_per_constant(x, False, 3))

    assert caller(2.0) == 2.0 - 2.0 + 2.0 - 2.0
    assert caller(1.5) == 0.0
    assert len(scaled.signatures) == 1
    assert len(scaled_per_constant.signatures) == 2
