# tests/python.cmake: the Python front-end (python/mptune) under /usr/bin/python3, from the build tree's copy
# of the package (build/python; the examples from python/examples): the translation of Kernel Tuner's
# arguments and its refusals, the strategies on a replayed Kernel Tuner cache, the vector add in C tuned for
# real, the CUDA stencil and matrix multiply on the stand-in driver (skipped, 77, without NVRTC), and
# `cmake --install`.
set(MPT_PY_TEST_ENV "PYTHONPATH=${CMAKE_BINARY_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" "CMAKE=${CMAKE_COMMAND}")
function(mpt_python_test name)
  mpt_script_test(${name} COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.py ${ARGN} LABELS python)
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${MPT_PY_TEST_ENV})
endfunction()
mpt_python_test(python_frontend)
mpt_python_test(python_strategies)
mpt_python_test(python_vector_add)
mpt_python_test(python_cuda)
set_tests_properties(python_cuda PROPERTIES SKIP_RETURN_CODE 77)
mpt_python_test(python_install ${CMAKE_INSTALL_PREFIX} ${MPT_PYTHON_INSTALL_DIR})
