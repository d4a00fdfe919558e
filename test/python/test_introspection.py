"""CompiledKernel introspection: .ir(stage) is what ptoc-opt prints for the same
traced IR and pipeline, .stats numbers agree with each other and with the IR, and
.pipeline names the knobs that were set."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import ptoc

RNG = np.random.default_rng(3)


def ptoc_opt():
    """The ptoc-opt of the build under test ($PTOC_BUILD_DIR, set by ctest)."""
    build = os.environ.get("PTOC_BUILD_DIR")
    path = os.path.join(build, "tools", "ptoc-opt") if build else shutil.which("ptoc-opt")
    if not path or not os.path.isfile(path):
        pytest.skip("ptoc-opt not found: set PTOC_BUILD_DIR to the build folder")
    return path


def run_opt(tmp_path, kernel, device, *flags):
    src = tmp_path / "traced.pto"
    src.write_text(kernel.ir("tensor"))
    done = subprocess.run([ptoc_opt(), str(src), f"--device={device}", *flags],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


# --- kernels ---------------------------------------------------------------------

def softmax(x, y):
    ptoc.set_vec_tile_shapes(4, 256)
    m = ptoc.amax(x, dim=-1, keepdim=True)
    e = ptoc.exp(x - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


def attention(q, k, y):
    ptoc.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    s = ptoc.matmul(q, k, out_dtype=ptoc.DT_FP32, b_trans=True)
    ptoc.set_vec_tile_shapes(8, 64)
    m = ptoc.amax(s, dim=-1, keepdim=True)
    e = ptoc.exp(s - m)
    y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)


def mlp(x, w1, w2):
    """matmul -> gelu (scaled by a folded constant) -> matmul, with a tail tile."""
    ptoc.set_cube_tile_shapes([16, 32], [32, 32], [16, 32])
    h = ptoc.matmul(x, w1, out_dtype=ptoc.DT_FP32)
    ptoc.set_vec_tile_shapes(16, 64)
    h = ptoc.cast(ptoc.gelu(h) * (ptoc.full([1, 1], 0.5) + 0.5), ptoc.DT_FP16)
    return ptoc.matmul(h, w2, out_dtype=ptoc.DT_FP32)


SOFTMAX_ARGS = (RNG.random((64, 256), dtype=np.float32), np.empty((64, 256), np.float32))
ATTENTION_ARGS = (RNG.random((64, 64), dtype=np.float32).astype(np.float16),
                  RNG.random((64, 64), dtype=np.float32).astype(np.float16),
                  np.empty((64, 64), np.float32))
MLP_ARGS = (RNG.random((48, 64), dtype=np.float32).astype(np.float16),
            RNG.random((64, 64), dtype=np.float32).astype(np.float16),
            RNG.random((64, 32), dtype=np.float32).astype(np.float16))

CASES = {
    "softmax": (softmax, SOFTMAX_ARGS),
    "attention": (attention, ATTENTION_ARGS),
    "mlp": (mlp, MLP_ARGS),
}


def compiled(name, device="tiny", **jit_options):
    body, args = CASES[name]
    return ptoc.jit(body, device=device, **jit_options).compile(*args)


# --- .ir(stage) == ptoc-opt ---------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_ir_stages_match_ptoc_opt(tmp_path, name):
    k = compiled(name)
    assert k.ir("partitioned") == run_opt(tmp_path, k, "tiny", "--pipeline=default")
    assert k.ir("tile") == run_opt(tmp_path, k, "tiny",
                                   "--pass-pipeline=canonicalize,cse,dce,expand-tiles")
    assert k.ir("codegen") == run_opt(tmp_path, k, "tiny", "--pipeline=default",
                                      "--stage=codegen")
    assert k.ir() == k.ir("codegen")


def test_ir_with_knobs_matches_ptoc_opt_running_the_reported_pipeline(tmp_path):
    # Group 1 is the softmax (AIV); cube_nbuffer_mode adds a pass to the pipeline.
    knobs = {"vec_nbuffer_mode": 2, "vec_nbuffer_setting": {1: 4}, "pg_lower_bound": 256,
             "cube_nbuffer_mode": 1}
    k = compiled("attention", pass_options=knobs)
    default = compiled("attention")
    # The vec setting folds the softmax rows 4 into 2; cube_nbuffer_mode 1 leaves the
    # four score tiles alone: each feeds the softmax, and merging would hide less than
    # it delays it (the pipelined automatic N, docs/passes.md nbuffer-merge).
    assert k.stats["subgraphs"] == {"AIC": 4, "AIV": 2, "total": 6}
    assert default.stats["subgraphs"] == {"AIC": 4, "AIV": 4, "total": 8}
    assert k.ir("partitioned") == run_opt(tmp_path, k, "tiny", f"--pass-pipeline={k.pipeline}")
    assert k.ir("codegen") == run_opt(tmp_path, k, "tiny", f"--pass-pipeline={k.pipeline}",
                                      "--stage=codegen")


def test_ir_on_a2_matches_ptoc_opt(tmp_path):
    k = compiled("softmax", device="a2")
    assert k.ir("partitioned") == run_opt(tmp_path, k, "a2", "--pipeline=default")
    assert k.ir("partitioned") != compiled("softmax").ir("partitioned")  # tiny merges more


def test_no_double_buffer_codegen_matches_ptoc_opt(tmp_path):
    k = compiled("softmax", host_options={"double_buffer": False})
    assert k.ir("codegen") == run_opt(tmp_path, k, "tiny", "--pipeline=default",
                                      "--stage=codegen", "--no-double-buffer")


def test_tensor_ir_round_trips_through_ptoc_opt(tmp_path):
    k = compiled("mlp")
    assert run_opt(tmp_path, k, "tiny", "--pass-pipeline=") == k.ir("tensor")


# --- .stats ----------------------------------------------------------------------

def subgraph_table(ir_text):
    return re.findall(r"^  subgraph \{([^}]*)\}$", ir_text, re.M)


def attr(entry, name):
    return re.search(rf"\b{name} = (\"?[\w]+\"?)", entry).group(1).strip('"')


@pytest.mark.parametrize("name", sorted(CASES))
def test_stats_are_consistent(name):
    k = compiled(name)
    s = k.stats
    sg = s["subgraphs"]
    assert sg["AIC"] + sg["AIV"] == sg["total"] > 0
    assert sum(g["size"] for g in s["groups"]) == sg["total"] == s["tasks"]
    for core in ("AIC", "AIV"):
        assert sum(g["size"] for g in s["groups"] if g["core"] == core) == sg[core]
    assert [g["hash_order"] for g in s["groups"]] == list(range(len(s["groups"])))
    assert all(g["key"] == f"func0_{g['hash_order']}" for g in s["groups"])
    # Isomorphic subgraphs share a leaf program; codegen compares the ops themselves,
    # so groups whose table hashes differ may share one too (docs/codegen.md).
    codegen = k.ir("codegen")
    assert len(re.findall(r"^leaf \d+:", codegen, re.M)) == s["leaves"] <= len(s["groups"])
    calls = re.findall(r"^call \d+ = leaf (\d+) sg (\d+)", codegen, re.M)
    assert len(calls) == s["tasks"]
    assert {int(leaf) for leaf, _ in calls} == set(range(s["leaves"]))
    assert sorted(int(sg) for _, sg in calls) == list(range(s["tasks"]))
    # The numbers are those of the partitioned IR's subgraph table.
    table = subgraph_table(k.ir("partitioned"))
    assert len(table) == sg["total"]
    for g in s["groups"]:
        members = [e for e in table if int(attr(e, "hash_order")) == g["hash_order"]]
        assert len(members) == g["size"]
        assert {int(attr(e, "group_size")) for e in members} == {g["size"]}
        assert {attr(e, "core") for e in members} == {g["core"].lower()}
        assert {int(attr(e, "cycles")) for e in members} == {g["cycles"]}
        assert {int(attr(e, "copy_in_bytes")) for e in members} == {g["copy_in_bytes"]}
    # tile_ops counts the ops expand-tiles made (gm_tensor workspaces are not tile ops).
    assert s["tile_ops"] == s["passes"]["expand-tiles"]["tile-ops"]
    tile = k.ir("tile")
    assert s["tile_ops"] == len(re.findall(r"^  %\w+ = ", tile, re.M)) - tile.count("gm_tensor")
    # Partition's merges are counted both ways.
    assert s["merges"]["partition"]["merged"] == s["passes"]["partition"]["merged"]


def test_nbuffer_merges_a_many_row_softmax_on_a2():
    @ptoc.jit
    def sm(x: ptoc.Tensor([256, 4096], ptoc.DT_FP32), y: ptoc.Tensor([256, 4096], ptoc.DT_FP32)):
        ptoc.set_vec_tile_shapes(1, 4096)
        m = ptoc.amax(x, dim=-1, keepdim=True)
        e = ptoc.exp(x - m)
        y[:] = e / ptoc.sum(e, dim=-1, keepdim=True)

    x = np.zeros((256, 4096), np.float32)
    s = sm.compile(x, x).stats
    merged = s["merges"]["nbuffer-merge"]["merged"]
    assert merged > 0
    assert s["passes"]["partition"]["subgraphs"] == 256  # one per row before the merge
    assert s["subgraphs"]["AIV"] == 256 - merged >= 48   # keeps the 48 AIV cores busy
    assert not any(s["merges"]["nbuffer-merge"]["refused"].values())


def test_stats_of_early_stages():
    k = compiled("softmax", host_options={"compile_stage": "tile"})
    s = k.stats
    assert s["subgraphs"]["total"] == 0 and s["groups"] == [] and s["tasks"] == 0
    assert s["tile_ops"] > 0 and "partition" not in s["passes"]


# --- .pipeline -------------------------------------------------------------------

def pipeline_elements(text):
    """{pass: its option text} of a pipeline ("a,b{x=1 y={0:2,-1:4}}")."""
    elements, depth, start = {}, 0, 0
    for i, ch in enumerate(text + ","):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            name, _, options = text[start:i].partition("{")
            elements[name] = options[:-1]
            start = i + 1
    return elements


def test_pipeline_names_the_knobs_set(tmp_path):
    default = compiled("softmax")
    assert default.pipeline == ("canonicalize,cse,dce,default-tiles,expand-tiles,partition,"
                                "nbuffer-merge{vec-nbuffer-mode=1},cube-nbuffer-merge,"
                                "l1-reuse-merge{cube-l1-reuse-mode=1}")
    # (The softmax has no AIC group 0: the compile says so, and the pipeline still
    # carries the setting.)
    with pytest.warns(UserWarning, match="cube-nbuffer-setting key 0 names no AIC group"):
        k = compiled("softmax", pass_options={"pg_lower_bound": 256, "merge_fuel": 5,
                                              "cube_nbuffer_mode": 2,
                                              "cube_nbuffer_setting": {0: 2, -1: 4}})
    passes = pipeline_elements(k.pipeline)
    assert list(passes) == ["canonicalize", "cse", "dce", "default-tiles", "expand-tiles",
                            "partition",
                            "nbuffer-merge", "cube-nbuffer-merge", "l1-reuse-merge"]
    assert passes["partition"] == "pg-lower-bound=256 merge-fuel=5"
    # merge_fuel reaches every pass that declares it.
    for p in ("nbuffer-merge", "cube-nbuffer-merge", "l1-reuse-merge"):
        assert "merge-fuel=5" in passes[p].split()
    assert "cube-nbuffer-setting={0:2,-1:4}" in passes["cube-nbuffer-merge"].split()
    # The reported pipeline is the one that ran: ptoc-opt gets the same IR from it.
    assert k.ir("partitioned") == run_opt(tmp_path, k, "tiny", f"--pass-pipeline={k.pipeline}")
