/* version.c - the version string, compiled in one place (version.h). */
#include "common/version.h" // defines: hpt_version

#ifndef HPT_VERSION
#define HPT_VERSION "0.1.0"
#endif

const char hpt_version[] = HPT_VERSION;
