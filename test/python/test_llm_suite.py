"""The LLM-scale suite (examples/llm/): every operator at its reduced size, with exact
numerics, against the float64 numpy reference its module declares."""

import os
import pathlib
import sys

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("PTOC_SOURCE_DIR") or
                          pathlib.Path(__file__).resolve().parents[2])
sys.path.insert(0, str(SOURCE_DIR / "examples" / "llm"))

import suite  # noqa: E402

OPERATORS = suite.all_operators()

# The list: each must be in the suite (a missing one fails, it is not skipped).
REQUIRED = {"rmsnorm", "rope", "swiglu_fp16", "swiglu_bf16", "gqa_prefill", "gqa_decode",
            "moe_gating", "moe_experts"}


def test_the_suite_holds_every_required_operator():
    missing = REQUIRED - {op.name for op in OPERATORS}
    assert not missing, f"operators missing from examples/llm: {sorted(missing)}"


def test_the_flash_attention_operators_are_tagged_for_their_goal():
    # benchmarks/llm.py holds operators tagged FLASH_ATTENTION to 1.6x the bound.
    tagged = {op.name for op in OPERATORS if suite.FLASH_ATTENTION in op.tags}
    assert tagged == {"gqa_prefill", "gqa_decode"}


def test_every_operator_names_its_source_and_a_smaller_size():
    for op in OPERATORS:
        assert op.source, f"{op.name}: no source for its shapes"
        assert op.full.keys() == op.small.keys(), op.name
        assert op.small != op.full, f"{op.name}: the numerics size is the full size"


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_operator_matches_numpy_at_reduced_size(op, tmp_path, monkeypatch):
    monkeypatch.setenv("PTOC_OUTPUT_DIR", str(tmp_path))
    ok, kernel, message = suite.check(op)
    assert ok, f"{op.name}: {message}"
    assert kernel.last_run.simulated_us > 0


# The operators that set options of their own (benchmarks/llm.py measures them also
# without: "defaults" beside "as written").
WITH_OPTIONS = [op for op in OPERATORS if op.pass_options or op.runtime_options]


def test_operators_declare_their_own_options():
    assert {op.name for op in WITH_OPTIONS} == {"gqa_prefill", "gqa_decode", "moe_experts"}
    for op in WITH_OPTIONS:
        runtime, passes = suite.options_of(op, runtime_options={"run_numerics": False})
        assert passes == op.pass_options
        assert runtime == {**op.runtime_options, "run_numerics": False}
        # ptoc's defaults: none of the operator's own, the caller's still applied.
        assert suite.options_of(op, defaults=True, runtime_options={"run_numerics": False}) \
            == ({"run_numerics": False}, {})


@pytest.mark.parametrize("op", WITH_OPTIONS, ids=lambda op: op.name)
def test_operator_with_default_options_matches_numpy(op, tmp_path, monkeypatch):
    monkeypatch.setenv("PTOC_OUTPUT_DIR", str(tmp_path))
    ok, kernel, message = suite.check(op, defaults=True)
    assert ok, f"{op.name} with ptoc's default options: {message}"
    # Compiled with the default pipeline's knobs, not the operator's own merge settings.
    compiled = kernel.compile(*op.inputs(op.small, np.random.default_rng(0)))
    assert "nbuffer-setting" not in compiled.pipeline
    if op.pass_options:
        written = op.make(op.small, "a2", *suite.options_of(op))
        assert "nbuffer-setting" in written.compile(
            *op.inputs(op.small, np.random.default_rng(0))).pipeline
