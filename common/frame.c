/* frame.c - a code object's bytes as a msgpack bin, written and read in pieces; see frame.h. */
#include "frame.h"

#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

/* msgpack-c's writer for a FILE: its own (msgpack_fbuffer_write) fails on 0 bytes, which
 * an empty bin's body is. */
static int write_file(void *out, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, out) == len ? 0 : -1;
}

int fdt_frame_write(FILE *out, const void *data, size_t size)
{
    if (size > FDT_FRAME_MAX)
        return -1;
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, write_file);
    return msgpack_pack_bin_with_body(&pk, data, size) == 0 ? 0 : -1;
}

/* The length of a bin's header by its first byte: bin 8, 16 or 32 (the type byte and a
 * big-endian length of 1, 2 or 4 bytes); 0 for any other type. A reader of a stream needs
 * it to know where the frame ends; msgpack-c reads the rest once the frame is whole. */
static size_t header_size(unsigned char first)
{
    switch (first) {
    case 0xc4:
        return 2;
    case 0xc5:
        return 3;
    case 0xc6:
        return 5;
    default:
        return 0;
    }
}

int fdt_frame_begin(fdt_frame *f, size_t size, char *why, size_t len)
{
    *f = (fdt_frame){.size = size};
    if (size > FDT_FRAME_MAX) {
        snprintf(why, len, "a frame of %zu bytes is over the limit of %zu", size,
                 FDT_FRAME_MAX);
        return -1;
    }
    f->buf = malloc(size + 5); /* the longest header, bin 32's */
    if (!f->buf) {
        snprintf(why, len, "out of memory for a frame of %zu bytes", size);
        return -1;
    }
    return 0;
}

/* The whole bin, read by msgpack-c and held to the announcement. */
static fdt_frame_state check(const fdt_frame *f, char *why, size_t len)
{
    msgpack_unpacked bin;
    msgpack_unpacked_init(&bin);
    size_t off = 0;
    const msgpack_unpack_return rc =
        msgpack_unpack_next(&bin, (const char *)f->buf, f->total, &off);
    const size_t got = rc == MSGPACK_UNPACK_SUCCESS ? bin.data.via.bin.size : 0;
    msgpack_unpacked_destroy(&bin);
    if (rc == MSGPACK_UNPACK_CONTINUE)
        snprintf(why, len, "the frame's msgpack bin runs past the %zu bytes its line "
                 "announced", f->size);
    else if (rc != MSGPACK_UNPACK_SUCCESS)
        snprintf(why, len, "the frame is not a readable msgpack bin");
    else if (got != f->size)
        snprintf(why, len, "the frame's msgpack bin holds %zu bytes where its line announced "
                 "%zu", got, f->size);
    else
        return FDT_FRAME_DONE;
    return FDT_FRAME_BAD;
}

fdt_frame_state fdt_frame_feed(fdt_frame *f, const void *data, size_t n, size_t *used,
                               char *why, size_t len)
{
    *used = 0;
    if (n == 0)
        return FDT_FRAME_MORE;
    if (f->total == 0) {
        const unsigned char first = *(const unsigned char *)data;
        const size_t head = header_size(first);
        if (!head) {
            snprintf(why, len, "a frame must be a msgpack bin (first byte 0xc4, 0xc5 or "
                     "0xc6), not an object whose first byte is 0x%02x", first);
            return FDT_FRAME_BAD;
        }
        f->total = head + f->size;
    }
    const size_t lacking = f->total - f->have;
    *used = n < lacking ? n : lacking;
    memcpy(f->buf + f->have, data, *used);
    f->have += *used;
    return f->have < f->total ? FDT_FRAME_MORE : check(f, why, len);
}

void *fdt_frame_take(fdt_frame *f, size_t *size)
{
    unsigned char *bytes = f->buf;
    *size = f->size;
    memmove(bytes, bytes + (f->total - f->size), f->size);
    *f = (fdt_frame){0};
    return bytes;
}

void fdt_frame_free(fdt_frame *f)
{
    free(f->buf);
    *f = (fdt_frame){0};
}
