/* ops.h - the protocol's operations (docs/protocol.md): a table of handlers dispatched by
 * name, each turning one request object into one answer object. */
#ifndef FDT_OPS_H
#define FDT_OPS_H

#include <sys/types.h>

#include "daemon/daemon.h"

#define FDT_PEER_GROUPS 64

/* Who is on the other end of a connection (SO_PEERCRED, SO_PEERGROUPS). */
typedef struct fdt_peer {
    uid_t uid;
    gid_t gid;
    pid_t pid;
    gid_t groups[FDT_PEER_GROUPS];
    int ngroups;
} fdt_peer;

/* The answer line (malloc'd, without newline) to one request line; NULL if out of memory. */
char *fdt_ops_answer(fdt_daemon *d, const fdt_peer *peer, const char *line, size_t len);

/* An error answer to a request that could not be read at all (a line too long). */
char *fdt_ops_error_line(const char *code, const char *message);

/* Whether the peer may change state: the daemon's uid, root, or the admin group. */
int fdt_peer_is_admin(const fdt_daemon *d, const fdt_peer *peer);

#endif
