/* amdgpu_codeobj.c - reads AMDGPU code objects: kernel resources from the msgpack metadata
 * note (through libelf and msgpack-c), and code objects out of clang offload bundles. */
#include "backends/amdgpu_codeobj.h"

#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NT_AMDGPU_METADATA 32
#define NOTE_OWNER "AMDGPU"

/* --- a bound on what msgpack-c allocates --- */

enum mp_kind { MP_BAD, MP_SCALAR, MP_BYTES, MP_ARRAY, MP_MAP };

/* How an object with a given first byte continues: the width of its big-endian length or
 * count field, and the bytes that follow besides the length's (type byte, fixed payload). */
struct mp_format {
    unsigned char kind, width, extra;
};

static const struct mp_format mp_formats[32] = { /* first bytes 0xc0 .. 0xdf */
    {MP_SCALAR, 0, 0}, {MP_BAD, 0, 0}, {MP_SCALAR, 0, 0}, {MP_SCALAR, 0, 0},  /* nil, -, bool */
    {MP_BYTES, 1, 0}, {MP_BYTES, 2, 0}, {MP_BYTES, 4, 0},                     /* bin */
    {MP_BYTES, 1, 1}, {MP_BYTES, 2, 1}, {MP_BYTES, 4, 1},                     /* ext */
    {MP_SCALAR, 0, 4}, {MP_SCALAR, 0, 8},                                     /* float */
    {MP_SCALAR, 0, 1}, {MP_SCALAR, 0, 2}, {MP_SCALAR, 0, 4}, {MP_SCALAR, 0, 8}, /* uint */
    {MP_SCALAR, 0, 1}, {MP_SCALAR, 0, 2}, {MP_SCALAR, 0, 4}, {MP_SCALAR, 0, 8}, /* int */
    {MP_SCALAR, 0, 2}, {MP_SCALAR, 0, 3}, {MP_SCALAR, 0, 5}, {MP_SCALAR, 0, 9},
    {MP_SCALAR, 0, 17},                                                       /* fixext */
    {MP_BYTES, 1, 0}, {MP_BYTES, 2, 0}, {MP_BYTES, 4, 0},                     /* str */
    {MP_ARRAY, 2, 0}, {MP_ARRAY, 4, 0}, {MP_MAP, 2, 0}, {MP_MAP, 4, 0},
};

/* The format of first byte t; *n gets the length or count the byte itself carries. */
static struct mp_format mp_format_of(unsigned char t, uint64_t *n)
{
    *n = 0;
    if (t < 0x80 || t >= 0xe0)
        return (struct mp_format){MP_SCALAR, 0, 0}; /* fixint */
    if (t >= 0xc0)
        return mp_formats[t - 0xc0];
    *n = t < 0xa0 ? t & 0x0f : t & 0x1f;
    return (struct mp_format){t < 0x90 ? MP_MAP : t < 0xa0 ? MP_ARRAY : MP_BYTES, 0, 0};
}

/* msgpack-c allocates a container's elements before reading them, so six bytes declaring
 * 2^32 elements make it ask for 64 GiB. Walking the first object beforehand and requiring
 * that everything still expected fits in the bytes left (each element takes at least one)
 * bounds its allocations by a small multiple of the input's size. */
static bool mp_fits(const unsigned char *p, size_t len)
{
    uint64_t pending = 1;
    size_t pos = 0;
    while (pending > 0) {
        uint64_t n;
        if (pos >= len)
            return false;
        struct mp_format f = mp_format_of(p[pos++], &n);
        if (f.kind == MP_BAD || f.width > len - pos)
            return false;
        for (unsigned i = 0; i < f.width; i++)
            n = n << 8 | p[pos++];
        pending--;
        if (f.kind == MP_ARRAY || f.kind == MP_MAP) {
            pending += f.kind == MP_MAP ? 2 * n : n;
        } else {
            if (f.extra + n > len - pos)
                return false;
            pos += f.extra + n;
        }
        if (pending > len - pos)
            return false;
    }
    return true;
}

/* --- the metadata document --- */

static bool mp_str_eq(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
           memcmp(o->via.str.ptr, s, n) == 0;
}

static const msgpack_object *mp_get(const msgpack_object *map, const char *key)
{
    if (!map || map->type != MSGPACK_OBJECT_MAP)
        return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++)
        if (mp_str_eq(&map->via.map.ptr[i].key, key))
            return &map->via.map.ptr[i].val;
    return NULL;
}

static const msgpack_object *find_kernel(const msgpack_object *doc, const char *entry)
{
    const msgpack_object *kernels = mp_get(doc, "amdhsa.kernels");
    if (!kernels || kernels->type != MSGPACK_OBJECT_ARRAY)
        return NULL;
    for (uint32_t i = 0; i < kernels->via.array.size; i++) {
        const msgpack_object *name = mp_get(&kernels->via.array.ptr[i], ".name");
        if (name && mp_str_eq(name, entry))
            return &kernels->via.array.ptr[i];
    }
    return NULL;
}

/* On gfx90a .vgpr_count already counts the AGPRs too (one register file), which is the
 * number occupancy depends on. */
static fdt_status read_counts(const msgpack_object *kernel, const char *entry,
                              fdt_resources *out, fdt_error *err)
{
    fdt_resources r;
    const struct {
        const char *key;
        int *value;
    } fields[] = {
        {".vgpr_count", &r.vgprs},
        {".sgpr_count", &r.sgprs},
        {".private_segment_fixed_size", &r.scratch_bytes},
        {".group_segment_fixed_size", &r.shared_bytes},
        {".max_flat_workgroup_size", &r.max_threads},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const msgpack_object *v = mp_get(kernel, fields[i].key);
        if (!v || v->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v->via.u64 > INT_MAX)
            return fdt_fail(err, FDT_ERROR,
                            "amdgpu code object: kernel '%s' has no valid %s in its metadata",
                            entry, fields[i].key);
        *fields[i].value = (int)v->via.u64;
    }
    *out = r;
    return FDT_OK;
}

static fdt_status read_metadata(const char *desc, size_t len, const char *entry,
                                fdt_resources *out, fdt_error *err)
{
    if (!mp_fits((const unsigned char *)desc, len))
        return fdt_fail(err, FDT_ERROR, "amdgpu code object: garbled metadata note");
    msgpack_unpacked doc;
    msgpack_unpacked_init(&doc);
    size_t off = 0;
    fdt_status s;
    if (msgpack_unpack_next(&doc, desc, len, &off) != MSGPACK_UNPACK_SUCCESS) {
        s = fdt_fail(err, FDT_ERROR, "amdgpu code object: garbled metadata note");
    } else {
        const msgpack_object *kernel = find_kernel(&doc.data, entry);
        s = kernel ? read_counts(kernel, entry, out, err)
                   : fdt_fail(err, FDT_ERROR,
                              "amdgpu code object: no kernel '%s' in amdhsa.kernels", entry);
    }
    msgpack_unpacked_destroy(&doc);
    return s;
}

/* --- the ELF around it --- */

static bool find_note(Elf *elf, const char **desc, size_t *len)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr shdr;
        Elf_Data *data;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE ||
            !(data = elf_getdata(scn, NULL)))
            continue;
        GElf_Nhdr note;
        size_t off = 0, name_off, desc_off;
        while ((off = gelf_getnote(data, off, &note, &name_off, &desc_off)) > 0) {
            const char *base = data->d_buf;
            if (note.n_type == NT_AMDGPU_METADATA && note.n_namesz == sizeof NOTE_OWNER &&
                memcmp(base + name_off, NOTE_OWNER, sizeof NOTE_OWNER) == 0) {
                *desc = base + desc_off;
                *len = note.n_descsz;
                return true;
            }
        }
    }
    return false;
}

static fdt_status read_elf(Elf *elf, const char *entry, fdt_resources *out, fdt_error *err)
{
    GElf_Ehdr ehdr;
    const char *desc;
    size_t len;
    if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
        return fdt_fail(err, FDT_ERROR, "amdgpu code object: not an ELF image (%s)",
                        elf_errmsg(-1));
    if (ehdr.e_machine != EM_AMDGPU)
        return fdt_fail(err, FDT_ERROR, "amdgpu code object: ELF for machine %u, not AMDGPU",
                        (unsigned)ehdr.e_machine);
    if (!find_note(elf, &desc, &len))
        return fdt_fail(err, FDT_ERROR,
                        "amdgpu code object: no NT_AMDGPU_METADATA note (code object v2 or "
                        "damaged)");
    return read_metadata(desc, len, entry, out, err);
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void init_libelf(void)
{
    elf_version(EV_CURRENT);
}

fdt_status fdt_amdgpu_resources(const void *elf, size_t size, const char *entry,
                                fdt_resources *out, fdt_error *err)
{
    if (!elf || size == 0)
        return fdt_fail(err, FDT_ERROR, "amdgpu code object: empty");
    pthread_once(&elf_once, init_libelf);
    /* elf_memory() takes a writable image: give it a copy rather than cast const away. */
    char *image = malloc(size);
    if (!image)
        return fdt_fail(err, FDT_ERROR, "amdgpu code object: out of memory");
    memcpy(image, elf, size);
    Elf *e = elf_memory(image, size);
    fdt_status s = e ? read_elf(e, entry, out, err)
                     : fdt_fail(err, FDT_ERROR, "amdgpu code object: %s", elf_errmsg(-1));
    elf_end(e);
    free(image);
    return s;
}

/* --- offload bundles --- */

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define COMPRESSED_BUNDLE_MAGIC "CCOB"

static bool take_u64(const unsigned char *p, size_t size, size_t *pos, uint64_t *out)
{
    if (size - *pos < 8)
        return false;
    *out = 0;
    for (int i = 7; i >= 0; i--)
        *out = *out << 8 | p[*pos + i];
    *pos += 8;
    return true;
}

/* Bundle ids read "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" (older: "hip-amdgcn-amd-amdhsa-
 * gfx90a"); arch matches its target id, or the target id's processor when arch has no
 * features. */
static bool id_matches(const char *id, size_t len, const char *arch)
{
    static const char triple[] = "amdgcn-amd-amdhsa-";
    const char *t = memmem(id, len, triple, sizeof triple - 1);
    if (!t)
        return false;
    t += sizeof triple - 1;
    if (t < id + len && *t == '-')
        t++;
    size_t rest = (size_t)(id + len - t), n = strlen(arch);
    return rest >= n && memcmp(t, arch, n) == 0 && (rest == n || t[n] == ':');
}

fdt_status fdt_amdgpu_unbundle(const void *data, size_t size, const char *arch,
                               const void **elf, size_t *elf_size, fdt_error *err)
{
    const unsigned char *p = data;
    size_t pos = sizeof BUNDLE_MAGIC - 1;
    uint64_t count;
    *elf = data;
    *elf_size = size;
    if (size >= 4 && memcmp(p, COMPRESSED_BUNDLE_MAGIC, 4) == 0)
        return fdt_fail(err, FDT_ERROR, "offload bundle: compressed bundles are not supported");
    if (size < pos || memcmp(p, BUNDLE_MAGIC, pos) != 0)
        return FDT_OK;
    if (!take_u64(p, size, &pos, &count))
        return fdt_fail(err, FDT_ERROR, "offload bundle: truncated");
    for (uint64_t i = 0; i < count; i++) {
        uint64_t off, len, id_len;
        if (!take_u64(p, size, &pos, &off) || !take_u64(p, size, &pos, &len) ||
            !take_u64(p, size, &pos, &id_len) || id_len > size - pos)
            return fdt_fail(err, FDT_ERROR, "offload bundle: truncated");
        const char *id = (const char *)p + pos;
        pos += id_len;
        if (!id_matches(id, id_len, arch))
            continue;
        if (off > size || len > size - off)
            return fdt_fail(err, FDT_ERROR, "offload bundle: entry for %s lies outside it", arch);
        *elf = p + off;
        *elf_size = len;
        return FDT_OK;
    }
    return fdt_fail(err, FDT_ERROR, "offload bundle: no code object for %s", arch);
}
