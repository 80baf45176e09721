/* hashes.c - the hashes that tell results and code objects apart (hashes.h). */
#include "engine/hashes.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine/variant.h"

/* FNV-1a, 64 or 128 bits. Every field is hashed as its length (8 bytes, little-endian) and
 * then its bytes, so that fields cannot run into each other: ("ab", "c") != ("a", "bc"). */
typedef struct hasher {
    uint64_t hi, lo; /* 64-bit hashes use lo only */
    int wide;
} hasher;

static hasher hash_start64(void)
{
    return (hasher){.lo = 0xcbf29ce484222325u};
}

static hasher hash_start128(void)
{
    return (hasher){.hi = 0x6c62272e07bb0142u, .lo = 0x62b821756295c58du, .wide = 1};
}

/* h *= 2^88 + 0x13b (FNV's 128-bit prime), modulo 2^128, in 64-bit halves. */
static void fnv128_multiply(hasher *h)
{
    const uint64_t c = 0x13b;
    const uint64_t low_part = (h->lo & 0xffffffffu) * c;
    const uint64_t high_part = (h->lo >> 32) * c;
    const uint64_t lo = low_part + (high_part << 32);
    const uint64_t carry = (high_part >> 32) + (lo < low_part);
    h->hi = h->hi * c + carry + (h->lo << 24);
    h->lo = lo;
}

static void hash_bytes(hasher *h, const void *data, size_t n)
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

static void hash_u64(hasher *h, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    hash_bytes(h, le, sizeof le);
}

static void hash_field(hasher *h, const void *data, size_t n)
{
    hash_u64(h, n);
    hash_bytes(h, data, n);
}

static void hash_text(hasher *h, const char *text, size_t cap)
{
    hash_field(h, text, strnlen(text, cap));
}

static void hash_int(hasher *h, int64_t v)
{
    hash_u64(h, 8);
    hash_u64(h, (uint64_t)v);
}

void fdt_device_fingerprint(const fdt_device_info *d, char out[20])
{
    hasher h = hash_start64();
    hash_text(&h, d->backend, sizeof d->backend);
    hash_text(&h, d->vendor, sizeof d->vendor);
    hash_text(&h, d->name, sizeof d->name);
    hash_text(&h, d->arch, sizeof d->arch);
    hash_int(&h, d->compute_units);
    hash_int(&h, (int64_t)d->memory_bytes);
    hash_text(&h, d->driver_version, sizeof d->driver_version);
    hash_text(&h, d->compiler_version, sizeof d->compiler_version);
    snprintf(out, 20, "%016" PRIx64, h.lo);
}

void fdt_code_key(const char *source, const char *const *defines, size_t ndefines,
                  const char *arch, const char *compiler_version, char out[33])
{
    hasher h = hash_start128();
    hash_text(&h, source, SIZE_MAX);
    hash_int(&h, (int64_t)ndefines);
    for (size_t i = 0; i < ndefines; i++)
        hash_text(&h, defines[i], SIZE_MAX);
    hash_text(&h, arch, SIZE_MAX);
    hash_text(&h, compiler_version, SIZE_MAX);
    snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, h.hi, h.lo);
}

void fdt_source_hash(const char *text, char out[33])
{
    hasher h = hash_start128();
    hash_text(&h, text, SIZE_MAX);
    snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, h.hi, h.lo);
}

/* The kernel sources built into the program with their hashes, computed once: every
 * answer names one, and libfdtune looks them up on every open. Families, then persist. */
enum { BUILT_IN_MAX = 16 };
static struct {
    const char *text;
    char hash[33];
} built_in[BUILT_IN_MAX];
static size_t nbuilt_in;
static pthread_once_t built_in_once = PTHREAD_ONCE_INIT;

static void add_built_in(const char *text)
{
    if (nbuilt_in == BUILT_IN_MAX)
        return; /* test_variant checks that every family fits */
    built_in[nbuilt_in].text = text;
    fdt_source_hash(text, built_in[nbuilt_in++].hash);
}

static void built_in_compute(void)
{
    for (const fdt_family *const *f = fdt_families(); *f; f++)
        add_built_in(fdt_family_source(*f));
    add_built_in(fdt_persist_source());
}

const char *fdt_built_in_hash(const char *text)
{
    pthread_once(&built_in_once, built_in_compute);
    for (size_t i = 0; i < nbuilt_in; i++)
        if (built_in[i].text == text)
            return built_in[i].hash;
    return NULL;
}

const char *fdt_built_in_source(const char *hash)
{
    pthread_once(&built_in_once, built_in_compute);
    for (size_t i = 0; i < nbuilt_in; i++)
        if (strcmp(built_in[i].hash, hash) == 0)
            return built_in[i].text;
    return NULL;
}

uint64_t fdt_hash_bytes(const void *data, size_t n)
{
    hasher h = hash_start64();
    hash_bytes(&h, data, n);
    return h.lo;
}

static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static char kernels_version[17];

static void kernels_version_compute(void)
{
    hasher h = hash_start64();
    for (const fdt_family *const *f = fdt_families(); *f; f++) {
        hash_text(&h, fdt_family_name(*f), SIZE_MAX);
        hash_text(&h, fdt_family_source(*f), SIZE_MAX);
    }
    hash_text(&h, fdt_compare_source(), SIZE_MAX);
    snprintf(kernels_version, sizeof kernels_version, "%016" PRIx64, h.lo);
}

const char *fdt_kernels_version(void)
{
    pthread_once(&kernels_once, kernels_version_compute);
    return kernels_version;
}
