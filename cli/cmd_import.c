/* cmd_import.c - `fdtune import FILE...`: results measured by another fdtuned (what its
 * `export --what results` wrote) merged into this one's store, a file at a time, each whole
 * or not at all (docs/protocol.md, "import"; the rules in tuner/daemon/import.c). The file
 * is read here, as the user who runs the command may, and sent in pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_daemon.h"
#include "commands.h"
#include "import_file.h"

/* Rows a page: about 1 KiB each, so a page stays well under the daemon's line bound
 * (max_line_bytes, 1 MiB by default) and its limit of 2000 rows a request. */
#define PAGE_ROWS 500

static const char import_help[] =
    "usage: fdtune import FILE...\n\n"
    "Merges results measured by another fdtuned (what its `fdtune export --what results`\n"
    "wrote, JSON or CSV, gzip-compressed or not) into this fdtuned's store. Each file lands\n"
    "whole or not at all: a row that is wrong refuses the file, naming its line. Importing a\n"
    "file twice adds nothing. Rows keep where they were measured (host, job there, fdtuned,\n"
    "kernel sources, time), and a job's winner answers its problem, except where this\n"
    "store's own measurement of it stands (docs/protocol.md, \"import\").\n\n" FDT_DAEMON_HELP;

static const struct option import_options[] = {
    FDT_DAEMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

static int no_option(int opt, const char *arg, void *ctx)
{
    (void)opt, (void)arg, (void)ctx;
    return -1;
}

/* One file's pages: the rows read since the last page went, and the set they go to. */
typedef struct sending {
    fdt_client *c;
    json_t *rows;
    json_int_t set;           /* 0 before the first page's answer */
    int rc;
} sending;

/* What the last page's answer says was merged. */
static void show_merged(const json_t *ans)
{
    printf("%" JSON_INTEGER_FORMAT " rows: %" JSON_INTEGER_FORMAT " added, %" JSON_INTEGER_FORMAT
           " here already; %" JSON_INTEGER_FORMAT " jobs, %" JSON_INTEGER_FORMAT
           " best rows stored, %" JSON_INTEGER_FORMAT " kept as stored",
           json_integer_value(json_object_get(ans, "rows")),
           json_integer_value(json_object_get(ans, "added")),
           json_integer_value(json_object_get(ans, "present")),
           json_integer_value(json_object_get(ans, "jobs")),
           json_integer_value(json_object_get(ans, "best")),
           json_integer_value(json_object_get(ans, "kept")));
    if (json_integer_value(json_object_get(ans, "confirming")))
        printf("; %" JSON_INTEGER_FORMAT " queued to be timed here (confirm_imported)",
               json_integer_value(json_object_get(ans, "confirming")));
    printf("\n");
}

/* Sends the rows read so far; the last page asks the daemon to merge the file. */
static int send_page(sending *s, int last)
{
    json_t *req = fdt_request("import"), *ans = NULL;
    json_object_set_new(req, "rows", s->rows); /* the request takes the page's rows */
    json_object_set_new(req, "last", json_boolean(last));
    if (s->set)
        json_object_set_new(req, "set", json_integer(s->set));
    s->rows = json_array();
    s->rc = fdt_client_call(s->c, req, &ans);
    if (s->rc != FDT_EXIT_OK)
        return -1;
    s->set = json_integer_value(json_object_get(ans, "set"));
    if (last && !s->c->json)
        show_merged(ans);
    json_decref(ans);
    return 0;
}

static int take(void *ctx, json_t *row)
{
    sending *s = ctx;
    json_array_append(s->rows, row);
    return json_array_size(s->rows) < PAGE_ROWS ? 0 : send_page(s, 0);
}

static int import_file(fdt_client *c, const char *path)
{
    char err[512] = "";
    sending s = {.c = c, .rows = json_array(), .rc = FDT_EXIT_OK};
    if (!c->json)
        printf("%s: ", path);
    fflush(stdout);
    int rc = fdt_import_file_read(path, take, &s, err, sizeof err);
    if (rc == 0)
        rc = send_page(&s, 1);
    json_decref(s.rows);
    if (rc == 0)
        return FDT_EXIT_OK;
    if (!c->json)
        printf("not imported\n");
    if (err[0] && s.rc == FDT_EXIT_OK) /* the file's fault; else the daemon's, reported */
        fprintf(stderr, "fdtune import: %s\n", err);
    return s.rc != FDT_EXIT_OK ? s.rc : FDT_EXIT_FAILED;
}

int fdt_cmd_import(int argc, char **argv)
{
    fdt_daemon_args a;
    const int parsed = fdt_daemon_parse(argc, argv, "h", import_options, import_help,
                                        no_option, NULL, &a);
    if (parsed)
        return parsed > 0 ? FDT_EXIT_OK : FDT_EXIT_USAGE;
    if (a.npos == 0)
        return fdt_usage_error("import", "name at least one file");
    fdt_client c;
    int rc = fdt_client_open(&c, "import", &a);
    for (int i = 0; rc == FDT_EXIT_OK && i < a.npos; i++)
        rc = import_file(&c, a.pos[i]);
    fdt_client_close(&c);
    return rc;
}
