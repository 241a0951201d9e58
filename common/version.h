/* version.h - the release and commit this build belongs to.
 * The one object that embeds it is common/version.o, built with
 * -DHPT_VERSION="0.1.0+g<commit>" (git rev-parse --short=12 HEAD); the
 * Makefile recompiles it whenever that text changes, so --version, the
 * batch scripts and submit.json never name a stale commit. */
#ifndef HPT_VERSION_H
#define HPT_VERSION_H

/* "0.1.0+g0123456789ab", or "0.1.0" outside a git checkout. */
extern const char hpt_version[];

#endif
