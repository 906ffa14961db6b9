/*
 * stackctl_table.c - aligned text tables (see stackctl.h): collect the
 * rows, then print every column as wide as its widest cell. Pure.
 * Design: docs/design.md#column-widths-fit-the-data
 */
#include <stdlib.h>
#include <string.h>

#include "stackctl.h"

void sc_table_init(struct sc_table *t, const char *const *head, const char *align)
{
    memset(t, 0, sizeof(*t));
    while (t->ncols < SC_TABLE_MAX_COLS && head[t->ncols] != NULL) {
        t->head[t->ncols] = head[t->ncols];
        t->right[t->ncols] = align != NULL && align[t->ncols] == 'r';
        t->ncols++;
    }
}

void sc_table_row(struct sc_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **c = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*c));
        if (c == NULL)
            return; /* out of memory: the row is lost, the table stays usable */
        t->cells = c;
        t->cap = cap;
    }
    char **row = t->cells + t->nrows * (size_t)t->ncols;
    for (int i = 0; i < t->ncols; i++)
        row[i] = strdup(cells[i] != NULL ? cells[i] : "-");
    t->nrows++;
}

static void print_row(const struct sc_table *t, const char *const *row, const size_t *w, FILE *out)
{
    for (int i = 0; i < t->ncols; i++) {
        const char *s = row[i] != NULL ? row[i] : "";
        int pad = (int)(w[i] - strlen(s));
        bool last = i == t->ncols - 1;
        if (t->right[i])
            fprintf(out, "%*s%s", pad, "", s);
        else
            fprintf(out, "%s%*s", s, last ? 0 : pad, "");
        fputs(last ? "\n" : "  ", out);
    }
}

void sc_table_print(const struct sc_table *t, FILE *out)
{
    size_t w[SC_TABLE_MAX_COLS];
    for (int i = 0; i < t->ncols; i++) {
        w[i] = strlen(t->head[i]);
        for (size_t r = 0; r < t->nrows; r++) {
            const char *s = t->cells[r * (size_t)t->ncols + (size_t)i];
            size_t n = s != NULL ? strlen(s) : 0;
            w[i] = n > w[i] ? n : w[i];
        }
    }
    print_row(t, t->head, w, out);
    for (size_t r = 0; r < t->nrows; r++)
        print_row(t, (const char *const *)(t->cells + r * (size_t)t->ncols), w, out);
}

void sc_table_free(struct sc_table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}
