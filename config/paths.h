/* config/paths.h - the private directory that holds fdtuned's socket: the daemon opens it
 * (creating it where missing), the client library checks it before it trusts a socket
 * there. paths.c's default paths and fdt_make_dirs are declared in config.h. */
#ifndef FDT_PATHS_H
#define FDT_PATHS_H

#include <stddef.h>
#include <sys/types.h>

/* The system service's account: config/fdtuned.sysusers creates it, config/fdtuned.service
 * runs the daemon as it, and libfdtune trusts a daemon run by it (cli/client.c). */
#define FDT_SERVICE_USER "fdtuned"

/* Opens the directory that holds path (O_DIRECTORY | O_NOFOLLOW), first creating it and
 * the missing directories above it with mode (before umask) when it does not exist;
 * *created says whether it was made now. As OpenSSH's StrictModes and tmux demand, it
 * must be private: a real directory, not a symbolic link, owned by this uid or root, that
 * neither its group nor others may write, so that no one else can replace a file in it.
 * The descriptor, or -1 with a reason that names the directory, its owner and its mode. */
int fdt_open_private_parent(const char *path, mode_t mode, int *created, char *err,
                            size_t errlen);

/* The client's side of the same rule: 0 when the existing directory that holds path is
 * private as above, uid also being allowed to own it too (geteuid() for no one more); else
 * -1 with the reason in err. Nothing is created. */
int fdt_check_private_parent(const char *path, uid_t also, char *err, size_t errlen);

#endif
