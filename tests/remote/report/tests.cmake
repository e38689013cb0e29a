# Plot/PNG report writer. Both suites include src/report/ for the encoder's internals
# (checksums, DEFLATE, tick choice).
tether_add_test(report_png_test SOURCES remote/report/png_test.cc LIBS tether::tools)
target_include_directories(report_png_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/tools/src)
tether_add_test(report_plot_test SOURCES remote/report/plot_test.cc LIBS tether::tools)
target_include_directories(report_plot_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/tools/src)
