/* device.c - a compiled code object's memory; see device.h. */
#include "device.h"

#include <stdlib.h>

void fdt_code_free(fdt_code *code)
{
    free(code->data);
    code->data = NULL;
    code->size = 0;
}
