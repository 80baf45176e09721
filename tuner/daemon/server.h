/* server.h - fdtuned's Unix socket: newline-delimited JSON requests in, answers out, in
 * order, per connection (docs/protocol.md); every connection served in turn, one request a
 * loop turn (server.c). */
#ifndef FDT_SERVER_H
#define FDT_SERVER_H

#include "daemon/daemon.h"

/* Creates the socket's directory, removes a stale socket file (one no socket of any type
 * is bound to; never a live one, nor any other file), binds with socket_mode and
 * socket_group, and listens. Connections are then admitted by max_clients and
 * max_clients_per_uid, trusted peers to slots of their own. 0, or -1 with the reason. */
int fdt_server_start(fdt_daemon *d, char *err, size_t errlen);
/* Stops listening, removes the socket file, and closes every client once the requests it
 * had sent are answered and the answers written. */
void fdt_server_close(fdt_daemon *d);
/* After the loop has ended. */
void fdt_server_free(fdt_daemon *d);

#endif
