/* frame.h - binary frames on the worker's pipes: a code object's bytes as one msgpack bin
 * object, right after the JSON line that announces it with its size (docs/protocol.md,
 * "Worker pipe"): the worker's code event to the daemon, a compile helper's answer to its
 * worker.
 *
 * Why a frame after a line, not the whole message in msgpack: every other message on
 * these pipes is a JSON line, read and logged as text; only a code object is binary. The
 * line says how many bytes follow, so a reader knows where the frame ends before reading
 * it, bounds it before allocating, and goes back to lines after it. The bin's own header
 * (its type and length) is checked against the announcement, so a stream that lost its
 * place is refused, never misread. Before, code objects were base64 inside the line: a
 * third more bytes, encoded and decoded on both sides, for no check a frame lacks.
 *
 * Writing: the line, then fdt_frame_write. Reading: fdt_frame_begin with the size the line
 * announced, then fdt_frame_feed with the stream's bytes as they come, until the frame is
 * whole (fdt_frame_take) or refused. */
#ifndef FDT_FRAME_H
#define FDT_FRAME_H

#include <stddef.h>
#include <stdio.h>

/* The largest frame either side writes or reads. A code object is kilobytes to a few
 * megabytes (a cubin, a hip code object, the cpu backend's shared object); the bound keeps
 * a wrong announcement from making the reader allocate without limit. */
#define FDT_FRAME_MAX ((size_t)256 << 20)

/* Writes size bytes of data as one msgpack bin (its header, then the bytes); does not
 * flush. 0, or -1 when size is over FDT_FRAME_MAX or the write failed. */
int fdt_frame_write(FILE *out, const void *data, size_t size);

typedef enum {
    FDT_FRAME_MORE, /* every byte given was taken; the frame needs more */
    FDT_FRAME_DONE, /* the frame is whole: fdt_frame_take */
    FDT_FRAME_BAD   /* not a msgpack bin of the announced size: the stream is unreadable */
} fdt_frame_state;

/* A frame being read. Zeroed (or taken, or freed): none is. */
typedef struct fdt_frame {
    unsigned char *buf; /* the bin as read, header first; NULL when no frame is begun */
    size_t size;        /* the announced size: the bin's length */
    size_t total;       /* its header and body; 0 until its first byte is read */
    size_t have;        /* bytes read */
} fdt_frame;

/* Begins reading a frame its line announced as size bytes. 0, or -1 with why set when size
 * is over FDT_FRAME_MAX or memory is short. */
int fdt_frame_begin(fdt_frame *f, size_t size, char *why, size_t len);

/* Takes from the n bytes of data what the begun frame still lacks; *used says how many (the
 * rest follows the frame). BAD sets why, and the frame is unusable: free it. */
fdt_frame_state fdt_frame_feed(fdt_frame *f, const void *data, size_t n, size_t *used,
                               char *why, size_t len);

/* A whole frame's bytes, malloc'd and now the caller's (not NULL, even for 0 bytes), their
 * count in *size; no frame is begun after. */
void *fdt_frame_take(fdt_frame *f, size_t *size);

/* Drops the frame begun, if any. */
void fdt_frame_free(fdt_frame *f);

#endif
