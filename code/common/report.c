/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void report_add(Report *r, const char *key, FieldKind kind, double value)
{
    if (r->count == REPORT_MAX_FIELDS)
        abort();
    r->fields[r->count++] = (Field){ key, kind, value, NULL };
}

void report_text(Report *r, const char *key, const char *text)
{
    report_add(r, key, FIELD_TEXT, 0);
    r->fields[r->count - 1].text = text;
}
enum { JSON_MAX_DEPTH = 4 };     /* objects inside objects, at most */

static int segment_length(const char *key)      /* up to the next dot */
{
    return (int)strcspn(key, ".");
}

static void print_json_object(FILE *out, const Report *r, const char *indent)
{
    const char *open[JSON_MAX_DEPTH];   /* the groups now open, outermost
                                           first */
    int depth = 0, written[JSON_MAX_DEPTH + 1] = { 0 };
    fputc('{', out);
    for (int i = 0; i < r->count; i++) {
        const Field *f = &r->fields[i];
        const char *name = f->key;
        int shared = 0;                 /* open groups this key lies in */
        while (shared < depth && strchr(name, '.') != NULL
               && segment_length(name) == segment_length(open[shared])
               && strncmp(name, open[shared],
                          (size_t)segment_length(name)) == 0) {
            name += segment_length(name) + 1;
            shared++;
        }
        for (; depth > shared; depth--)
            fprintf(out, "\n%s%*s}", indent, 2 * depth, "");
        for (const char *dot; (dot = strchr(name, '.')) != NULL;
             name = dot + 1) {
            if (depth == JSON_MAX_DEPTH)
                abort();
            fprintf(out, "%s\n%s%*s\"%.*s\": {", written[depth] ? "," : "",
                    indent, 2 * depth + 2, "", (int)(dot - name), name);
            written[depth] = 1;
            open[depth++] = name;
            written[depth] = 0;
        }
        fprintf(out, "%s\n%s%*s\"%s\": ", written[depth] ? "," : "",
                indent, 2 * depth + 2, "", name);
        written[depth] = 1;
        if (f->kind == FIELD_TEXT)
            fprintf(out, "\"%s\"", f->text);
        else if (!isfinite(f->value))   /* JSON has no NaN or infinity */
            fputs("null", out);
        else
            fprintf(out, "%.17g", f->value);
    }
    for (; depth > 0; depth--)
        fprintf(out, "\n%s%*s}", indent, 2 * depth, "");
    fprintf(out, "\n%s}", indent);
}

static void print_json(FILE *out, const Report *r)
{
    print_json_object(out, r, "");
    fputc('\n', out);
}
void json_list_begin(FILE *out, const char *key)
{
    fprintf(out, "{\n  \"%s\": [", key);
}

void json_list_item(FILE *out, const Report *r, int index)
{
    fprintf(out, "%s\n    ", index ? "," : "");
    print_json_object(out, r, "    ");
}

void json_list_end(FILE *out)
{
    fprintf(out, "\n  ]\n}\n");
}
void print_csv_row(FILE *out, const Report *r, int header)
{
    if (header) {
        for (int i = 0; i < r->count; i++) {
            fputs(i ? "," : "", out);
            for (const char *c = r->fields[i].key; *c; c++)
                fputc(*c == '.' ? '_' : *c, out);
        }
        fputc('\n', out);
    }
    for (int i = 0; i < r->count; i++) {
        const Field *f = &r->fields[i];
        if (i)
            fputc(',', out);
        if (f->kind == FIELD_TEXT)
            fprintf(out, "%s", f->text);
        else
            fprintf(out, "%.17g", f->value);
    }
    fputc('\n', out);
}

static void print_csv(FILE *out, const Report *r)
{
    print_csv_row(out, r, 1);
}
static void print_latex_time(FILE *out, const char *prefix, const Field *f);

static void print_macro_name(FILE *out, const char *prefix, const char *key)
{
    static const char *const digit_names[] = {
        "Zero", "One", "Two", "Three", "Four",
        "Five", "Six", "Seven", "Eight", "Nine"
    };
    fprintf(out, "\\newcommand{\\%s", prefix);
    int start_of_word = 1;
    for (const char *c = key; *c; c++) {
        if (*c == '_' || *c == '.') {
            start_of_word = 1;
        } else if (isdigit((unsigned char)*c)) {
            fputs(digit_names[*c - '0'], out);
            start_of_word = 1;
        } else {
            fputc(start_of_word ? toupper((unsigned char)*c) : *c, out);
            start_of_word = 0;
        }
    }
    fputs("}{", out);
}

static void print_latex_value(FILE *out, const Field *f)
{
    switch (f->kind) {
    case FIELD_COUNT:
        fputs(grouped(f->value).s, out);
        break;
    case FIELD_REAL:
        fputs(grouped(f->value).s, out);
        break;
    case FIELD_BYTES: {
        Text t = bytes_auto(f->value);
        char *space = strchr(t.s, ' ');
        *space = '\0';
        fprintf(out, "%s\\,%s", t.s, space + 1);
        break;
    }
    case FIELD_SCI: {
        if (f->value == 0) {
            fputs("0", out);
            break;
        }
        Text t = sci(f->value, 3);
        char *e = strchr(t.s, 'e');
        *e = '\0';
        fprintf(out, "\\ensuremath{%s\\times10^{%s}}", t.s, e + 1);
        break;
    }
    case FIELD_ENG: {
        Text t = eng(f->value);
        char *e = strchr(t.s, 'e');
        if (e == NULL) {
            fputs(t.s, out);
            break;
        }
        *e = '\0';
        fprintf(out, "\\ensuremath{%s\\times10^{%s}}", t.s, e + 1);
        break;
    }
    case FIELD_FRACTION:
        fprintf(out, "%s\\,\\%%", sig(100 * f->value, 3).s);
        break;
    case FIELD_TEXT:                       /* names such as ln2_w */
        for (const char *c = f->text; *c; c++) {
            if (strchr("&%$#_{}", *c))
                fputc('\\', out);
            fputc(*c, out);
        }
        break;
    }
}

static void print_latex(FILE *out, const Report *r, const char *prefix)
{
    for (int i = 0; i < r->count; i++) {
        print_macro_name(out, prefix, r->fields[i].key);
        print_latex_value(out, &r->fields[i]);
        fputs("}\n", out);
        print_latex_time(out, prefix, &r->fields[i]);
    }
}
/* The key of a time field with "seconds" (or a last word "s") made "time";
   0 when the field holds no time. */
static int time_key(const char *key, char *out, size_t size)
{
    size_t n = strlen(key);
    const char *word = strstr(key, "seconds");
    if (n + 8 >= size)
        return 0;
    if (word && (word == key || word[-1] == '_')
        && (word[7] == '\0' || word[7] == '_')) {
        snprintf(out, size, "%.*stime%s", (int)(word - key), key, word + 7);
        return 1;
    }
    if (n < 3 || strcmp(key + n - 2, "_s") != 0)
        return 0;
    if (n > 7 && strcmp(key + n - 7, "_time_s") == 0)
        snprintf(out, size, "%.*s", (int)(n - 2), key);
    else
        snprintf(out, size, "%.*stime", (int)(n - 1), key);
    return 1;
}

static void print_latex_time(FILE *out, const char *prefix, const Field *f)
{
    char key[128];
    if (f->kind != FIELD_REAL || !time_key(f->key, key, sizeof key))
        return;
    print_macro_name(out, prefix, key);
    Text t = duration(f->value);
    char *space = strchr(t.s, ' ');
    *space = '\0';
    fprintf(out, "%s\\,%s}\n", t.s,
            strcmp(space + 1, "us") == 0 ? "\\ensuremath{\\mu}s" : space + 1);
}

int report_requested(Option *options)
{
    return option_given(options, "--json") || option_given(options, "--csv")
        || option_given(options, "--latex");
}

void print_report(FILE *out, const Report *r, Option *options)
{
    if (option_given(options, "--json"))
        print_json(out, r);
    else if (option_given(options, "--csv"))
        print_csv(out, r);
    else if (option_given(options, "--latex"))
        print_latex(out, r, option_text(options, "--latex"));
}
