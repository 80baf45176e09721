/* fdtune.h - libfdtune, the client library of fdtuned: ask the daemon on this host for the
 * best launch configuration of a stencil kernel, or send it any request of the protocol
 * (docs/protocol.md).
 *
 *     char err[256];
 *     fdtune_conn *c = fdtune_connect(NULL, 0, err, sizeof err);
 *     fdtune_problem p = {.nx = 512, .ny = 512, .nz = 512};
 *     fdtune_answer a;
 *     if (!c || fdtune_query(c, &p, &a, err, sizeof err) != FDTUNE_OK) ...use err...
 *     ...compile a.sources with a.defines, launch a.entry with a.grid and a.block...
 *     fdtune_close(c);
 *
 * Every call blocks until it is answered, fails, or times out (30 s unless set otherwise),
 * and reports failure as text in err; the library never exits, aborts or prints. A
 * connection serves one thread at a time; connections are independent of each other.
 * Build with `pkg-config --cflags --libs fdtune`.
 *
 * ABI: the library is libfdtune.so.2 since fdtune_problem and fdtune_answer grew the memory
 * layout (pitch, offset; layout) at their ends: a solver built against libfdtune.so.1 would
 * pass a shorter problem and get a longer answer written, so it must be rebuilt, and its
 * loader finds no libfdtune.so.2 for it to run with by mistake. Source written for .so.1
 * builds unchanged and keeps its behaviour (a zero-initialized problem is dense). */
#ifndef FDTUNE_H
#define FDTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fdtune_status {
    FDTUNE_OK = 0,
    FDTUNE_ERR_CONNECT = -1, /* the daemon cannot be reached (no socket, nobody listening),
                                or is not one to trust (see fdtune_connect) */
    FDTUNE_ERR_IO = -2,      /* the connection broke or the answer did not come in time */
    FDTUNE_ERR_ANSWER = -3,  /* the answer is not what the protocol promises */
    FDTUNE_ERR_REFUSED = -4, /* the daemon answered with an error: "code: message" in err */
    FDTUNE_ERR_ARG = -5,     /* a bad argument to the library itself */
    FDTUNE_ERR_DEVICE = -6,  /* fdtune_kernel.h: the device, its runtime or compiler failed */
    FDTUNE_ERR_COMPILE = -7, /* fdtune_kernel.h: a source did not compile (err: the log) */
    FDTUNE_ERR_LAYOUT = -8   /* fdtune_kernel_check_field: a field is not aligned as the
                                kernel's layout: results are right, launches slower */
} fdtune_status;

#define FDTUNE_DEFAULT_TIMEOUT_MS 30000

/* The version of this header; fdtune_version() is the library's, which a solver built
 * against one release and run with another may compare with it. */
#define FDTUNE_VERSION "0.4.0"
const char *fdtune_version(void);

typedef struct fdtune_conn fdtune_conn;

/* Where fdtune_connect(NULL, ...) connects: $FDTUNE_SOCKET if set, else the user's daemon
 * ($XDG_RUNTIME_DIR/fdtuned/fdtuned.sock) if its socket exists, else the system service's
 * (/run/fdtuned/fdtuned.sock). */
void fdtune_default_socket(char *out, size_t len);

/* Connects to the daemon's socket (NULL: fdtune_default_socket). timeout_ms bounds the
 * connect and, later, each request (0 or less: FDTUNE_DEFAULT_TIMEOUT_MS). Returns NULL
 * with the reason, naming the socket, in err. An answer names code to run, so whatever the
 * path, the daemon must run as this user (geteuid), root, the system service's account
 * fdtuned (at a socket whose directory lies in one only root may write, as /run), or the
 * uid $FDTUNE_TRUST_UID names, and the socket's directory must be private: a real
 * directory, not a symbolic link, owned by one of them and writable by no one else.
 * Anything else is refused before a byte is sent, the reason naming the socket and the
 * daemon's uid or the directory. */
fdtune_conn *fdtune_connect(const char *socket_path, int timeout_ms, char *err, size_t errlen);

/* The timeout of the requests that follow (0 or less: the default). */
void fdtune_set_timeout(fdtune_conn *c, int timeout_ms);

/* The socket path the connection uses. */
const char *fdtune_socket_path(const fdtune_conn *c);

/* Closes the connection and frees it; NULL is allowed. */
void fdtune_close(fdtune_conn *c);

/* Sends one request (a JSON object on one line; a final newline is optional) and reads its
 * answer line, which may be several megabytes (an export). On FDTUNE_OK, *answer_line is
 * the answer without its newline, NUL-terminated, to be released with free(); the daemon's
 * own errors ("ok": false) are answers too, returned as FDTUNE_OK. After FDTUNE_ERR_IO the
 * connection is closed: every later request fails until a new fdtune_connect. */
int fdtune_request(fdtune_conn *c, const char *json_line, char **answer_line, char *err,
                   size_t errlen);

typedef enum fdtune_precision { FDTUNE_DOUBLE = 0, FDTUNE_FLOAT = 1 } fdtune_precision;
/* FDTUNE_PERSIST: hot, and the solver holds f's row edges in L2 with the answer's
 * persist kernel (NVIDIA sm_80 and later; docs/protocol.md, "query"). FDTUNE_AUTO: the
 * state the tuner chose for the shape, hot or persist; an answer in persist carries the
 * persist kernel. */
typedef enum fdtune_cache {
    FDTUNE_HOT = 0,
    FDTUNE_COLD = 1,
    FDTUNE_PERSIST = 2,
    FDTUNE_AUTO = 3
} fdtune_cache;

#define FDTUNE_DEVICE_ANY (-1)
#define FDTUNE_DEVICE_KIND (-2)
/* fdtune_problem's pitch: the solver may pad its fields' rows; the tuner measures the dense
 * layout and padded ones and answers the fastest, in the answer's layout. */
#define FDTUNE_PITCH_AUTO (-1)

/* A problem to ask about. Zero-initialized fields take the defaults: double precision,
 * radius 1 (the 7-point Laplacian), hot cache (the same buffers every time step), device 0,
 * dense fields.
 *
 * The layout of every field of the problem: point (i, j, k) lies at
 * base + offset + i + pitch * (j + ny * k) (in points), base 256-byte aligned (as cudaMalloc
 * and hipMalloc return; fdtune_field_alloc in fdtune_kernel.h makes such buffers). Padded
 * rows (pitch > nx) and a start moved by offset write whole 32-byte sectors, which short
 * rows gain 10-25% from. */
typedef struct fdtune_problem {
    int nx, ny, nz;
    int radius;            /* 1..4; 0 means 1 */
    fdtune_precision precision;
    fdtune_cache cache;
    int device;            /* the daemon's device index; for a tuning job also
                              FDTUNE_DEVICE_ANY (any device) or FDTUNE_DEVICE_KIND (any
                              device of device 0's kind, the daemon's default) */
    int tune_if_missing;   /* on a miss, also queue a tuning job (needs the rights of tune) */
    int pitch;             /* the fields' row pitch in points: 0 dense (nx), nx to nx + 4096,
                              or FDTUNE_PITCH_AUTO: the tuner picks, the answer says which */
    int offset;            /* points from the 256-byte-aligned base to point (0, 0, 0): 0 to
                              256 / sizeof(real) - 1; 0 with FDTUNE_PITCH_AUTO */
} fdtune_problem;

/* The layout an answer is for, which the solver's fields must then follow: the asked one,
 * or under FDTUNE_PITCH_AUTO the fastest measured (docs/protocol.md, "Layout"). */
typedef struct fdtune_layout {
    int pitch;             /* the row pitch in points (nx: dense); 0 where fdtune_answer_parse
                              read an answer of an fdtuned older than layouts: dense */
    int offset;            /* points from the aligned base to point (0, 0, 0) */
    double dense_gbps;     /* pitch auto: the dense layout's measured figure; else 0 */
    double gain;           /* pitch auto: gbps / dense_gbps; 0 where dense was not measured */
} fdtune_layout;

#define FDTUNE_NAME_MAX 128
#define FDTUNE_DEFINES_MAX 32
#define FDTUNE_DEFINE_MAX 64
#define FDTUNE_SOURCES_MAX 4
#define FDTUNE_HASH_LEN 33 /* 32 hex digits and a NUL */

/* The best known configuration for a problem; docs/protocol.md, "query", says what each
 * field means. Strings the daemon left out are empty, numbers it left out are 0. */
typedef struct fdtune_answer {
    char match[16];        /* exact, nearest or default */
    char device_match[16]; /* fingerprint, model, arch or none */
    struct {               /* the tuned shape the answer comes from (match != default) */
        int nx, ny, nz;
        char device[FDTUNE_NAME_MAX];
        char driver[FDTUNE_NAME_MAX];
        char fingerprint[FDTUNE_NAME_MAX];
    } from;
    double distance;       /* match nearest: how far the tuned shape is from the asked one */
    char variant[FDTUNE_NAME_MAX]; /* e.g. tiled:64x2x2:m8:seed */
    char family[32];
    char sources[FDTUNE_SOURCES_MAX][FDTUNE_NAME_MAX]; /* the files of kernels_src/ whose
                           concatenation, in this order, is the kernel's source: common.h,
                           then the family's template */
    int nsources;
    char source[FDTUNE_NAME_MAX];  /* the family's template, e.g. tiled.hip (last of sources) */
    char source_hash[FDTUNE_HASH_LEN]; /* the concatenated text's hash: the "source"
                           operation answers the text (fdtune_kernel.h does all this) */
    char entry[FDTUNE_NAME_MAX];   /* the kernel's name, e.g. fdt_laplacian */
    int block[3];          /* launch geometry for the asked shape */
    int grid[3];
    char defines[FDTUNE_DEFINES_MAX][FDTUNE_DEFINE_MAX]; /* "R=1": pass each as -DR=1 */
    int ndefines;
    double gbps;           /* measured effective bandwidth of the tuned shape */
    double copy_gbps;      /* device-to-device copy on the same device, the ceiling */
    double kernel1_gbps;   /* the seeds' kernel 1, the baseline */
    int kernels_current;   /* 0: measured with older kernel sources; re-tuning refreshes it */
    struct {               /* cache mode persist, when the answer was measured in it: launch
                              entry (sources, same defines) with (f, nx, ny, nz, 0) once
                              for every buffer the stencil writes, before the time steps,
                              and with (f, nx, ny, nz, 1) before freeing it */
        int present;       /* 0: nothing to do (other cache modes, default answers) */
        char sources[FDTUNE_SOURCES_MAX][FDTUNE_NAME_MAX];
        int nsources;
        char source_hash[FDTUNE_HASH_LEN];
        char entry[FDTUNE_NAME_MAX];   /* fdt_persist_edges */
        int block[3];
        int grid[3];
    } persist;
    long long job;         /* the tuning job tune_if_missing queued, or 0 */
    fdtune_layout layout;  /* the layout the answer is for: the asked one (a nearest answer
                              may have been measured in another), or under pitch auto the
                              fastest measured; a default answer: the asked (auto: dense) */
} fdtune_answer;

/* Asks the daemon for the best configuration of problem p. */
int fdtune_query(fdtune_conn *c, const fdtune_problem *p, fdtune_answer *a, char *err,
                 size_t errlen);
/* The same for a stencil of the solver's own: spec is its JSON text (docs/stencils.md),
 * which names the stencil and its radius (p's radius is not sent). */
int fdtune_query_spec(fdtune_conn *c, const fdtune_problem *p, const char *spec,
                      fdtune_answer *a, char *err, size_t errlen);

/* Reads a query's answer line (what fdtune_request returned) into a; an answer with
 * "ok": false gives FDTUNE_ERR_REFUSED and "code: message" in err. */
int fdtune_answer_parse(const char *answer_line, fdtune_answer *a, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
