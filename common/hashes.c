/* hashes.c - the hashes that tell results and code objects apart (hashes.h). */
#include "hashes.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>


fdt_hasher fdt_hasher_start64(void)
{
    return (fdt_hasher){.lo = 0xcbf29ce484222325u};
}

fdt_hasher fdt_hasher_start128(void)
{
    return (fdt_hasher){.hi = 0x6c62272e07bb0142u, .lo = 0x62b821756295c58du, .wide = 1};
}

/* h *= 2^88 + 0x13b (FNV's 128-bit prime), modulo 2^128, in 64-bit halves. */
static void fnv128_multiply(fdt_hasher *h)
{
    const uint64_t c = 0x13b;
    const uint64_t low_part = (h->lo & 0xffffffffu) * c;
    const uint64_t high_part = (h->lo >> 32) * c;
    const uint64_t lo = low_part + (high_part << 32);
    const uint64_t carry = (high_part >> 32) + (lo < low_part);
    h->hi = h->hi * c + carry + (h->lo << 24);
    h->lo = lo;
}

static void hash_bytes(fdt_hasher *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h->lo ^= p[i];
        if (h->wide)
            fnv128_multiply(h);
        else
            h->lo *= 0x100000001b3u;
    }
}

static void hash_u64(fdt_hasher *h, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    hash_bytes(h, le, sizeof le);
}

static void hash_field(fdt_hasher *h, const void *data, size_t n)
{
    hash_u64(h, n);
    hash_bytes(h, data, n);
}

void fdt_hasher_text(fdt_hasher *h, const char *text, size_t cap)
{
    hash_field(h, text, strnlen(text, cap));
}

void fdt_hasher_int(fdt_hasher *h, int64_t v)
{
    hash_u64(h, 8);
    hash_u64(h, (uint64_t)v);
}

void fdt_device_fingerprint(const fdt_device_info *d, char out[20])
{
    fdt_hasher h = fdt_hasher_start64();
    fdt_hasher_text(&h, d->backend, sizeof d->backend);
    fdt_hasher_text(&h, d->vendor, sizeof d->vendor);
    fdt_hasher_text(&h, d->name, sizeof d->name);
    fdt_hasher_text(&h, d->arch, sizeof d->arch);
    fdt_hasher_int(&h, d->compute_units);
    fdt_hasher_int(&h, (int64_t)d->memory_bytes);
    fdt_hasher_text(&h, d->driver_version, sizeof d->driver_version);
    fdt_hasher_text(&h, d->compiler_version, sizeof d->compiler_version);
    fdt_hasher_hex(&h, out);
}

void fdt_code_key(const char *source, const char *const *defines, size_t ndefines,
                  const char *arch, const char *compiler_version, char out[33])
{
    fdt_hasher h = fdt_hasher_start128();
    fdt_hasher_text(&h, source, SIZE_MAX);
    fdt_hasher_int(&h, (int64_t)ndefines);
    for (size_t i = 0; i < ndefines; i++)
        fdt_hasher_text(&h, defines[i], SIZE_MAX);
    fdt_hasher_text(&h, arch, SIZE_MAX);
    fdt_hasher_text(&h, compiler_version, SIZE_MAX);
    fdt_hasher_hex(&h, out);
}

void fdt_source_hash(const char *text, char out[33])
{
    fdt_hasher h = fdt_hasher_start128();
    fdt_hasher_text(&h, text, SIZE_MAX);
    fdt_hasher_hex(&h, out);
}

uint64_t fdt_hash_bytes(const void *data, size_t n)
{
    fdt_hasher h = fdt_hasher_start64();
    hash_bytes(&h, data, n);
    return h.lo;
}

void fdt_hasher_hex(const fdt_hasher *h, char *out)
{
    if (h->wide)
        snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, h->hi, h->lo);
    else
        snprintf(out, 17, "%016" PRIx64, h->lo);
}
