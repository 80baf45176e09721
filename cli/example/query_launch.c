/* query_launch.c - how a solver asks fdtuned for its launch configuration: connect, query
 * the grid shape, then compile the kernel source with the defines and launch it with the
 * grid and block of the answer. Copy it into your solver.
 *
 *     cc query_launch.c $(pkg-config --cflags --libs fdtune) -o query_launch
 *     ./query_launch [NX NY NZ]        (default 512 512 512, double, radius 1) */
#include <stdio.h>
#include <stdlib.h>

#include <fdtune.h>

static int side(const char *text)
{
    char *end;
    const long v = strtol(text, &end, 10);
    return *end == '\0' && v > 0 && v <= 65536 ? (int)v : 0;
}

int main(int argc, char **argv)
{
    fdtune_problem p = {.nx = 512, .ny = 512, .nz = 512}; /* double, radius 1, hot cache */
    if (argc == 4) {
        p.nx = side(argv[1]), p.ny = side(argv[2]), p.nz = side(argv[3]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [NX NY NZ]\n", argv[0]);
        return 2;
    }
    if (!p.nx || !p.ny || !p.nz) {
        fprintf(stderr, "%s: each of NX NY NZ must be a whole number from 1 to 65536\n",
                argv[0]);
        return 2;
    }

    char err[512];
    fdtune_conn *conn = fdtune_connect(NULL, 0, err, sizeof err); /* $FDTUNE_SOCKET or default */
    if (!conn) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 1;
    }
    fdtune_answer a;
    const int st = fdtune_query(conn, &p, &a, err, sizeof err);
    fdtune_close(conn);
    if (st != FDTUNE_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 1;
    }

    printf("match:   %s", a.match);
    if (a.from.nx)
        printf(" (tuned %dx%dx%d on %s)", a.from.nx, a.from.ny, a.from.nz, a.from.device);
    printf("\nvariant: %s, kernel %s\nsource: ", a.variant, a.entry);
    for (int i = 0; i < a.nsources; i++) /* concatenated in this order */
        printf(" %s", a.sources[i]);
    printf("\ndefines:");
    for (int i = 0; i < a.ndefines; i++)
        printf(" -D%s", a.defines[i]);
    printf("\nlaunch:  grid %d %d %d, block %d %d %d\n", a.grid[0], a.grid[1], a.grid[2],
           a.block[0], a.block[1], a.block[2]);
    /* hipModuleLaunchKernel(fn, a.grid[0], a.grid[1], a.grid[2],
     *                       a.block[0], a.block[1], a.block[2], 0, stream, args, NULL); */
    return 0;
}
