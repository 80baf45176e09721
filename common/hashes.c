/* hashes.c - the hashes that tell results and code objects apart (hashes.h), made with
 * xxHash's XXH3. xxhash.h is used header-only (XXH_INLINE_ALL): its functions are compiled
 * into this file, so no program or library links libxxhash, statically or not. */
#include "hashes.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

_Static_assert(sizeof(XXH3_state_t) <= sizeof ((fdt_hasher *)0)->state,
               "fdt_hasher holds an XXH3 state");

/* The state is held as bytes (hashes.h) and worked on in a copy of XXH3's own type: bytes
 * declared as such may not be read or written as another type (C11 6.5p7), and GCC's -O2
 * does make wrong hashes of such a cast. A copy is sound: a state reset without a seed or
 * a secret points only at xxHash's default secret, a static table, never into itself. */
static void update(fdt_hasher *h, const void *data, size_t n)
{
    XXH3_state_t state;
    memcpy(&state, h->state, sizeof state);
    XXH3_64bits_update(&state, data, n);
    memcpy(h->state, &state, sizeof state);
}

/* The 64- and 128-bit hashes share their state and its updates; only the digest differs. */
static fdt_hasher hasher_start(int wide)
{
    fdt_hasher h = {.wide = wide};
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    memcpy(h.state, &state, sizeof state);
    return h;
}

fdt_hasher fdt_hasher_start64(void)
{
    return hasher_start(0);
}

fdt_hasher fdt_hasher_start128(void)
{
    return hasher_start(1);
}

static void put_u64(unsigned char *le, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
}

void fdt_hasher_text(fdt_hasher *h, const char *text, size_t cap)
{
    const size_t n = strnlen(text, cap);
    unsigned char length[8];
    put_u64(length, n);
    update(h, length, sizeof length);
    update(h, text, n);
}

/* One update for the field, its length and its value: a spec's pattern is thousands. */
void fdt_hasher_int(fdt_hasher *h, int64_t v)
{
    unsigned char field[16];
    put_u64(field, 8);
    put_u64(field + 8, (uint64_t)v);
    update(h, field, sizeof field);
}

void fdt_hasher_hex(const fdt_hasher *h, char *out)
{
    XXH3_state_t state;
    memcpy(&state, h->state, sizeof state);
    if (h->wide) {
        const XXH128_hash_t w = XXH3_128bits_digest(&state);
        snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, w.high64, w.low64);
    } else {
        snprintf(out, 17, "%016" PRIx64, XXH3_64bits_digest(&state));
    }
}

/* db/store.c's ST_DEVICE_ADOPTABLE matches a device to its row by these same fields, when
 * the row has another fingerprint: a field added here must be added there. */
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
    return XXH3_64bits(data, n);
}
