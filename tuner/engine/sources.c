/* sources.c - the built-in kernel sources' hashes and version; see sources.h. */
#include "engine/sources.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine/variant.h"
#include "hashes.h"

/* The kernel sources built into the program with their hashes, computed once: every
 * answer names one, and libfdtune looks them up on every open. Families, then persist. */
enum { BUILT_IN_MAX = 32 };
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

static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static char kernels_version[17];

static void kernels_version_compute(void)
{
    fdt_hasher h = fdt_hasher_start64();
    for (const fdt_family *const *f = fdt_families(); *f; f++) {
        if (fdt_family_serves_specs(*f))
            continue; /* the built-ins' answers do not depend on them */
        fdt_hasher_text(&h, fdt_family_name(*f), SIZE_MAX);
        fdt_hasher_text(&h, fdt_family_source(*f), SIZE_MAX);
    }
    fdt_hasher_text(&h, fdt_compare_source(), SIZE_MAX);
    fdt_hasher_hex(&h, kernels_version);
}

const char *fdt_kernels_version(void)
{
    pthread_once(&kernels_once, kernels_version_compute);
    return kernels_version;
}
