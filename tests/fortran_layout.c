/* fortran_layout.c - the C half of the check that cli/fortran/fdtune.f90 matches the C
 * headers: fdtune_c_layout(name) answers the size of a struct, the offset of a field or
 * the value of a constant as the C compiler sees them, and tests/fortran_layout.f90
 * compares each with what the Fortran compiler made of the module.
 *
 *     cc -Icli/include -c tests/fortran_layout.c -o fl.o
 *     gfortran -I MODDIR tests/fortran_layout.f90 fl.o -o fortran_layout && ./fortran_layout
 *
 * No libfdtune is needed: only the headers. */
#include <stddef.h>
#include <string.h>

#include "fdtune.h"
#include "fdtune_kernel.h"

long long fdtune_c_layout(const char *name);
int fdtune_c_layout_count(void);

#define SIZE(type) {#type, sizeof(type)}
#define OFF(type, field) {#type "." #field, offsetof(type, field)}
#define MEMBER_SIZE(type, field) {"sizeof " #type "." #field, sizeof(((type *)0)->field)}
#define CONST(name) {#name, name}

static const struct {
    const char *name;
    long long value;
} table[] = {
    SIZE(fdtune_problem),
    OFF(fdtune_problem, radius),
    OFF(fdtune_problem, precision),
    OFF(fdtune_problem, cache),
    OFF(fdtune_problem, tune_if_missing),
    OFF(fdtune_problem, pitch),
    OFF(fdtune_problem, offset),

    SIZE(fdtune_layout),
    OFF(fdtune_layout, offset),
    OFF(fdtune_layout, dense_gbps),
    OFF(fdtune_layout, gain),

    SIZE(fdtune_answer),
    OFF(fdtune_answer, device_match),
    OFF(fdtune_answer, from),
    MEMBER_SIZE(fdtune_answer, from),
    OFF(fdtune_answer, from.fingerprint),
    OFF(fdtune_answer, distance),
    OFF(fdtune_answer, variant),
    OFF(fdtune_answer, family),
    OFF(fdtune_answer, sources),
    OFF(fdtune_answer, nsources),
    OFF(fdtune_answer, source),
    OFF(fdtune_answer, source_hash),
    OFF(fdtune_answer, entry),
    OFF(fdtune_answer, block),
    OFF(fdtune_answer, grid),
    OFF(fdtune_answer, defines),
    OFF(fdtune_answer, ndefines),
    OFF(fdtune_answer, gbps),
    OFF(fdtune_answer, kernel1_gbps),
    OFF(fdtune_answer, kernels_current),
    OFF(fdtune_answer, persist),
    MEMBER_SIZE(fdtune_answer, persist),
    OFF(fdtune_answer, persist.nsources),
    OFF(fdtune_answer, persist.source_hash),
    OFF(fdtune_answer, persist.entry),
    OFF(fdtune_answer, persist.grid),
    OFF(fdtune_answer, job),
    OFF(fdtune_answer, layout),

    SIZE(fdtune_kernel_options),
    OFF(fdtune_kernel_options, timeout_ms),
    OFF(fdtune_kernel_options, cache_dir),
    OFF(fdtune_kernel_options, kernel1),

    SIZE(fdtune_kernel_info),
    OFF(fdtune_kernel_info, reason),
    OFF(fdtune_kernel_info, variant),
    OFF(fdtune_kernel_info, match),
    OFF(fdtune_kernel_info, grid),
    OFF(fdtune_kernel_info, block),
    OFF(fdtune_kernel_info, stored_gbps),
    OFF(fdtune_kernel_info, copy_gbps),
    OFF(fdtune_kernel_info, persist),
    OFF(fdtune_kernel_info, module_ms),
    OFF(fdtune_kernel_info, cache_hits),
    OFF(fdtune_kernel_info, compiles),
    OFF(fdtune_kernel_info, note),
    OFF(fdtune_kernel_info, layout),

    /* The enums' storage, which the Fortran side declares as integer(c_int). */
    {"sizeof fdtune_precision", sizeof(fdtune_precision)},
    {"sizeof fdtune_cache", sizeof(fdtune_cache)},

    CONST(FDTUNE_OK),
    CONST(FDTUNE_ERR_CONNECT),
    CONST(FDTUNE_ERR_IO),
    CONST(FDTUNE_ERR_ANSWER),
    CONST(FDTUNE_ERR_REFUSED),
    CONST(FDTUNE_ERR_ARG),
    CONST(FDTUNE_ERR_DEVICE),
    CONST(FDTUNE_ERR_COMPILE),
    CONST(FDTUNE_ERR_LAYOUT),
    CONST(FDTUNE_PITCH_AUTO),
    CONST(FDTUNE_DEFAULT_TIMEOUT_MS),
    CONST(FDTUNE_DOUBLE),
    CONST(FDTUNE_FLOAT),
    CONST(FDTUNE_HOT),
    CONST(FDTUNE_COLD),
    CONST(FDTUNE_PERSIST),
    CONST(FDTUNE_NAME_MAX),
    CONST(FDTUNE_DEFINES_MAX),
    CONST(FDTUNE_DEFINE_MAX),
    CONST(FDTUNE_SOURCES_MAX),
    CONST(FDTUNE_HASH_LEN),
};

/* The value of name, or -1000000 when C knows no such name (a typo on the Fortran side, or
 * a field the header no longer has). */
long long fdtune_c_layout(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].value;
    return -1000000;
}

/* How many names the table holds, so that the Fortran side can see it asked for all. */
int fdtune_c_layout_count(void)
{
    return (int)(sizeof table / sizeof table[0]);
}
