/* version.h - the version of fdtuned, fdtune, fdtune-worker and libfdtune, one for all:
 * the Makefile reads it (the .pc file's Version), the daemon answers it in `status`, and
 * every program prints it with --version. The public header cli/include/fdtune.h says it
 * again as FDTUNE_VERSION, for solvers that do not see this file; test_wire checks the two
 * agree and that fdtune_version() returns it. */
#ifndef FDT_VERSION_H
#define FDT_VERSION_H

#define FDT_VERSION "0.4.0"

#endif
