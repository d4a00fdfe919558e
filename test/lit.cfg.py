# lit configuration for ptoc's pass tests (test/passes and friends).
import os
import lit.formats

config.name = "ptoc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".pto"]
config.excludes = ["Inputs", "unit", "python", "e2e"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ptoc_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.ptoc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])

# Every ptoc-opt run in the suite also checks that its output prints, parses and
# prints back identically (--verify-roundtrip), so the whole suite exercises the
# text form.
ptoc_opt = os.path.join(config.ptoc_tools_dir, "ptoc-opt")
config.substitutions.append(
    (r"(?<![\w/.-])ptoc-opt(?![\w.-])", ptoc_opt + " --verify-roundtrip"))
config.substitutions.append(("%python", config.python_executable))
