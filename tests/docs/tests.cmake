# Docs that run: every command README.md and docs/*.md show in ```sh blocks is checked in the
# form shown (tether's programs parsed against their own options, scripts' options against
# the scripts, file commands run), so a renamed flag fails here, not for the reader.
add_test(NAME Docs.EveryShownCommandChecks
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doc_commands.py
                 --source ${PROJECT_SOURCE_DIR} --build ${CMAKE_BINARY_DIR})
# The library the benchmark scripts write their tables into docs/performance.md with.
add_test(NAME Docs.DocTableWrite COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/doc_table_test.sh)
