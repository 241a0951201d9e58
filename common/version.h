/* version.h - the release this build belongs to.
 * The Makefile may override it with -DHPT_VERSION="..." from git describe. */
#ifndef HPT_VERSION_H
#define HPT_VERSION_H

#ifndef HPT_VERSION
#define HPT_VERSION "0.1.0"
#endif

#endif
