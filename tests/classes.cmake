# tests/classes.cmake: device classes in one run (issue 31): simulated classes under mpiexec.mpich -n 7
# (tests/classes_e2e.py), one search per class, their logs, T4 files, portability table and resume.
foreach(t run kill waiting)
  mpt_script_test(classes_${t} COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/classes_e2e.py ${t})
endforeach()
# the coordinator's searches, their own workers and budgets, portability evaluations, an explicit worker set
mpt_mpi_test(test_coord_searches NP 4 SOURCES test_coord_searches.c conv_fixture.c)
# --confirm with two classes (tests/confirm_classes_e2e.py, -n 3): each class's finalists and default measured again on
# its own workers, the summary and `mptune show` per class, a confirmation cut short resumed per class
mpt_script_test(confirm_classes_e2e COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/confirm_classes_e2e.py)
# outputs of two classes (tests/classes_outputs.py, -n 3): the portability table of a maximized metric, a resume
# with one class's replayed file changed, the header's macros of two classes on one device model
foreach(t rate resume header)
  mpt_script_test(classes_outputs_${t} COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/classes_outputs.py ${t})
endforeach()
