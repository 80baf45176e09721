/* base64.c - base64 encoding and strict decoding; see base64.h. */
#include "base64.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *fdt_base64_encode(const void *data, size_t size)
{
    const unsigned char *in = data;
    char *out = malloc((size + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < size; i += 3) {
        const size_t left = size - i;
        const uint32_t v = (uint32_t)in[i] << 16 | (left > 1 ? (uint32_t)in[i + 1] << 8 : 0) |
                           (left > 2 ? in[i + 2] : 0);
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = left > 1 ? alphabet[v >> 6 & 63] : '=';
        *o++ = left > 2 ? alphabet[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* The value of a base64 digit, or -1. */
static int digit(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* One group of four characters into up to three bytes; how many, or -1. Padding may only
 * end the last group, and the bits it leaves unused must be zero. */
static int decode_group(const char *g, int last, unsigned char *out)
{
    const int pad = last ? (g[3] == '=') + (g[2] == '=' && g[3] == '=') : 0;
    uint32_t v = 0;
    for (int i = 0; i < 4 - pad; i++) {
        const int d = digit(g[i]);
        if (d < 0)
            return -1;
        v = v << 6 | (uint32_t)d;
    }
    v <<= 6 * pad;
    if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
        return -1;
    out[0] = (unsigned char)(v >> 16);
    out[1] = (unsigned char)(v >> 8);
    out[2] = (unsigned char)v;
    return 3 - pad;
}

int fdt_base64_decode(const char *text, size_t len, void **out, size_t *size)
{
    if (len % 4 != 0)
        return -1;
    unsigned char *buf = malloc(len / 4 * 3 + 1);
    if (!buf)
        return -2;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        const int got = decode_group(text + i, i + 4 == len, buf + n);
        if (got < 0) {
            free(buf);
            return -1;
        }
        n += (size_t)got;
    }
    *out = buf;
    *size = n;
    return 0;
}
