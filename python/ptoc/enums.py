"""PyPTO's option enums that ptoc ops take: ``ReLuType`` (matmul's
``extend_params={'relu_type': ...}``)."""

import enum


class ReLuType(enum.Enum):
    """Whether matmul's FIXPIPE applies a ReLU to the result on its way out."""
    NO_RELU = 0
    RELU = 1
