# Source this on the GPU machine, after scripts/gpu_check.sh unpacked
# .gpu-deps, to run what the check built from another call of the device
# tool (benchmarks/gpu/*.py, mpirun):
#
#   . scripts/gpu_env.sh [BUILD_DIR]          (default: build-gpu-check)
#
# The build's programs find the prefix's libraries, and Open MPI runs from the
# prefix: dpkg -x put it under BUILD_DIR/deps-root/usr, not /usr, where its
# tools, plugins and PMIx's plugins would otherwise be looked for.
# Ranks on this one machine talk over shared memory; the network transports'
# plugins, whose libraries are not shipped, are left unloaded and unannounced.
gpu_env_build=$(cd "${1:-build-gpu-check}" && pwd)
gpu_env_usr=$gpu_env_build/deps-root/usr
if [ ! -d "$gpu_env_usr/lib/x86_64-linux-gnu" ]; then
  echo "gpu_env: $gpu_env_usr holds no libraries: run scripts/gpu_check.sh first" >&2
  return 1 2>/dev/null || exit 1
fi
export LD_LIBRARY_PATH=$gpu_env_usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# PyTorch's libnccl.so.2, linked through the check's nccl-root (gpu_check.sh).
if [ -d "$gpu_env_build/nccl-root/lib" ]; then
  export LD_LIBRARY_PATH=$gpu_env_build/nccl-root/lib:$LD_LIBRARY_PATH
fi
if [ -x "$gpu_env_usr/bin/orterun" ]; then
  export PATH=$gpu_env_usr/bin:$PATH
  export OPAL_PREFIX=$gpu_env_usr
  export PMIX_PREFIX=$gpu_env_usr/lib/x86_64-linux-gnu/pmix2
  export PMIX_PKGLIBDIR=$PMIX_PREFIX/lib/pmix
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mtl=^ofi,psm,psm2
  # Containers often forbid the cross-process reads of its single-copy mode.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  export OMPI_MCA_mca_base_component_show_load_errors=0
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
unset gpu_env_build gpu_env_usr
