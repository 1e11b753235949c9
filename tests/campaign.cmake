# tests/campaign.cmake: tests of the campaign file (jobs/campaign/, `mptune campaign FILE --check`).
mpt_unit_test(test_campaign SOURCES test_campaign.c)
# `mptune campaign FILE --check` end to end, and the schema docs/campaign-1.0.json against the same files
mpt_script_test(campaign_cli COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/campaign_cli.py)
# `mptune campaign FILE` run under mpiexec.mpich -n 7 (tests/campaign_e2e.py): two jobs over three simulated classes,
# per-job logs, budgets per (job, class), a worker taking the other job's work, kills and resume, bad input; a real
# (cpu evaluator) campaign's unknown class refused before any log changes; each job's time budget
foreach(t run kill bad classes time)
  mpt_script_test(campaign_${t} COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/campaign_e2e.py ${t})
endforeach()
