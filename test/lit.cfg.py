# -*- Python -*-
# lit configuration for RLX-MLIR.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "RLX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rlx_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "python"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%rlx_src", config.rlx_src_root))
config.substitutions.append(("%rlx_obj", config.rlx_obj_root))
# Shared libraries for mlir-runner: upstream's runner utils and RLX's CPU runtime.
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%rlx_lib_dir", config.rlx_lib_dir))
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.rlx_tools_dir, config.llvm_tools_dir]
tools = ["rlx-opt", "rlx-gen", "rlx-run", "rlx-translate", "mlir-runner", "mlir-translate",
         ToolSubst("mlir-opt-22", os.path.join(config.llvm_tools_dir, "mlir-opt"))]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.rlx_tools_dir, append_path=True)

# The project's shared inputs (model configs, field cases) live outside the
# repository, in ../shared next to the checkout. RLX_SHARED_DIR overrides.
def find_shared():
    candidates = [os.environ.get("RLX_SHARED_DIR", ""),
                  os.path.join(config.rlx_src_root, "..", "shared"),
                  "/work/shared"]
    for c in candidates:
        if c and os.path.isdir(os.path.join(c, "models")):
            return os.path.abspath(c)
    return None

shared = find_shared()
if shared:
    config.available_features.add("shared-models")
    config.substitutions.append(("%shared", shared))
else:
    lit_config.warning("../shared/models not found: model tests are unsupported "
                       "(set RLX_SHARED_DIR)")
