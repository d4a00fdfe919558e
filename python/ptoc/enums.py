"""PyPTO's option enums that ptoc ops take: ``ReLuType`` (matmul's
``extend_params={'relu_type': ...}``) and ``PrecisionType`` (div's ``precision_type``)."""

import enum


class ReLuType(enum.Enum):
    """Whether matmul's FIXPIPE applies a ReLU to the result on its way out."""
    NO_RELU = 0
    RELU = 1


class PrecisionType(enum.Enum):
    """div's precision mode: HIGH_PRECISION (the default) gives the correctly rounded
    quotient; INTRINSIC multiplies by the reciprocal (each rounded to the dtype),
    which is faster and may be 1 ulp off (docs/ir.md, "Elementwise")."""
    INTRINSIC = 0
    HIGH_PRECISION = 1
