# Plot and picture writer (Cairo drawing, libpng and Cairo's SVG surface for the files). Both
# suites include src/report/ for its private headers (image_file.h, ticks.h) and read the
# written PNGs back through libpng; png_test draws on Cairo surfaces itself.
tether_add_test(report_png_test SOURCES remote/report/png_test.cc
                LIBS tether::tools PkgConfig::CAIRO PNG::PNG)
target_include_directories(report_png_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/tools/src)
tether_add_test(report_plot_test SOURCES remote/report/plot_test.cc LIBS tether::tools PNG::PNG)
target_include_directories(report_plot_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/tools/src)
# The seed pictures' figure writer (scene.h): world views, legends, the time colour bar.
tether_add_test(report_scene_test SOURCES remote/report/scene_test.cc LIBS tether::tools PNG::PNG)
