# The Python extension (python/): "on if found" like the other optional parts.
# AUTO builds it when Python's headers and pybind11 are there, except in a
# sanitizer build, whose instrumented module would need the sanitizer runtime
# preloaded into the interpreter.
set(BULKGNN_PYTHON AUTO CACHE STRING "Build the Python extension (AUTO, ON, OFF)")
set_property(CACHE BULKGNN_PYTHON PROPERTY STRINGS AUTO ON OFF)

set(BULKGNN_HAVE_PYTHON OFF)
if(BULKGNN_PYTHON STREQUAL "ON" OR (BULKGNN_PYTHON STREQUAL "AUTO" AND NOT BULKGNN_SANITIZE))
  # Debian's interpreter, which scripts/install_deps.sh gives numpy and torch;
  # a pyenv or conda shim earlier on PATH has neither. scikit-build-core (pip
  # install .) and -DPython_EXECUTABLE=... name their own.
  if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
  set(python_required "")
  if(BULKGNN_PYTHON STREQUAL "ON")
    set(python_required REQUIRED)
  endif()
  find_package(Python 3.9 ${python_required} COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    set(PYBIND11_FINDPYTHON ON)
    find_package(pybind11 2.10 CONFIG ${python_required})
    find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h ${python_required})
  endif()
  if(Python_FOUND AND pybind11_FOUND AND DLPACK_INCLUDE_DIR)
    set(BULKGNN_HAVE_PYTHON ON)
  endif()
endif()
