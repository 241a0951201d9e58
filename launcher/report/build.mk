# launcher/report/build.mk - hpctrain report's library: metrics.jsonl as
# series (report_data, pure), where a run broke off and went on across
# its requeues, attempts and resizes (report_timeline, pure), a sweep's
# points as chart series (report_points, pure) and charts drawn with
# cairo's paths and text
# (chart.c; PLplot's -dev package would pull in Qt, wxWidgets and
# gfortran).  Only bin/hpctrain-report links cairo; the test decodes the
# PNGs with libpng.  The manifest of the charts report wrote in its
# output directory (report_manifest) is a shell: what report may remove.

DEBIAN_PKGS += libcairo2-dev libpng-dev
REPORT_LIBS  = $(shell $(PKG_CONFIG) --libs cairo) -lm

$(OBJ)/launcher/report/chart.o $(SAN)/launcher/report/chart.o: \
	HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags cairo)

UNIT_TESTS += test_report test_report_points test_report_manifest test_report_timeline
UNIT_LIBS_test_report = $(shell $(PKG_CONFIG) --libs cairo libpng fontconfig) -lm
$(OBJ)/tests/unit/test_report.o $(SAN)/tests/unit/test_report.o: \
	HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags cairo)
UNIT_LIBS_test_report_points = $(REPORT_LIBS)
