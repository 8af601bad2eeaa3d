/* Tangled from chapters/93-trainer-state.nw; edit the chapter, not this file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "minigpt.h"

static const char magic[8] = "MINIGPT";      /* with its final NUL */
enum { FORMAT_VERSION = 2, HEADER_WORDS = 22 };

static uint64_t fnv1a(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

static const uint64_t fnv_offset = 0xcbf29ce484222325ULL;
static uint64_t bits_of(double x)
{
    uint64_t w;
    memcpy(&w, &x, sizeof w);
    return w;
}

static double double_of(uint64_t w)
{
    double x;
    memcpy(&x, &w, sizeof x);
    return x;
}

static void header_words(const Model *m, const TrainingState *s,
                         uint64_t *w)
{
    const AdamW *o = &s->optimizer;
    uint64_t words[HEADER_WORDS] = {
        0, FORMAT_VERSION,
        (uint64_t)s->config.layers, (uint64_t)s->config.hidden,
        (uint64_t)s->config.heads, (uint64_t)s->config.seq,
        (uint64_t)s->config.vocab, (uint64_t)s->batch, s->seed, s->step,
        s->sequences, s->data.state, (uint64_t)m->params_count, sizeof(real),
        s->steps, s->warmup, bits_of(o->lr), bits_of(o->beta1),
        bits_of(o->beta2), bits_of(o->eps), bits_of(o->weight_decay),
        bits_of(o->clip)
    };
    memcpy(&words[0], magic, sizeof magic);
    memcpy(w, words, sizeof words);
}
static int sync_directory(const char *path);

static int put(FILE *f, const void *data, size_t size, uint64_t *hash)
{
    *hash = fnv1a(*hash, data, size);
    return fwrite(data, 1, size, f) == size;
}

int checkpoint_save(const char *path, const Model *m, const TrainingState *s,
                    char *why, size_t why_size)
{
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(temporary, "wb");
    if (f == NULL) {
        snprintf(why, why_size, "cannot create %s", temporary);
        return -1;
    }
    uint64_t header[HEADER_WORDS], hash = fnv_offset;
    header_words(m, s, header);
    size_t bytes = m->params_count * sizeof(real);
    int ok = put(f, header, sizeof header, &hash)
          && put(f, m->params_memory, bytes, &hash)
          && put(f, m->m_memory, bytes, &hash)
          && put(f, m->v_memory, bytes, &hash)
          && fwrite(&hash, 1, sizeof hash, f) == sizeof hash
          && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(temporary, path) != 0) {
        remove(temporary);
        snprintf(why, why_size, "could not write %s (disk full?); "
                 "the previous checkpoint is untouched", path);
        return -1;
    }
    if (sync_directory(path) != 0) {
        snprintf(why, why_size, "wrote %s, but could not sync its directory "
                 "to the disk", path);
        return -1;
    }
    return 0;
}
static int sync_directory(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else                                     /* "/ckpt" is in "/" */
        snprintf(dir, sizeof dir, "%.*s",
                 (int)(slash - path) + (slash == path), path);
    int fd = open(dir, O_RDONLY);
    if (fd < 0)
        return -1;
    int ok = fsync(fd) == 0 || errno == EINVAL;
    close(fd);
    return ok ? 0 : -1;
}
/* Read at most `limit` bytes: a checkpoint of the expected size fits, and
   a file that is longer (or endless, like /dev/zero) shows as too long. */
static unsigned char *read_all(const char *path, size_t limit, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *data = malloc(limit);
    if (data != NULL)
        *size = fread(data, 1, limit, f);
    fclose(f);
    return data;
}

int checkpoint_load(const char *path, Model *m, TrainingState *s,
                    char *why, size_t why_size)
{
    uint64_t h[HEADER_WORDS], want[HEADER_WORDS];
    size_t arrays = 3 * m->params_count * sizeof(real);
    size_t expected = sizeof h + arrays + sizeof(uint64_t);
    size_t size = 0;
    unsigned char *data = read_all(path, expected + 1, &size);
    if (data == NULL) {
        snprintf(why, why_size, "cannot read %s", path);
        return -1;
    }
    int status = -1;
    header_words(m, s, want);
    if (size < sizeof h || memcmp(data, magic, sizeof magic) != 0)
        snprintf(why, why_size, "%s is not a minigpt checkpoint", path);
    else if (memcpy(h, data, sizeof h), h[1] == 1)
        snprintf(why, why_size, "%s has format version 1, which did not save "
                 "the schedule; this minigpt reads version %d only", path,
                 FORMAT_VERSION);
    else if (h[1] != FORMAT_VERSION)
        snprintf(why, why_size, "%s has format version %llu, not %d", path,
                 (unsigned long long)h[1], FORMAT_VERSION);
    else if (h[13] != want[13])
        snprintf(why, why_size, "%s holds %llu-byte numbers; this build "
                 "uses %zu-byte ones", path, (unsigned long long)h[13],
                 sizeof(real));
    else if (memcmp(&h[2], &want[2], 7 * sizeof(uint64_t)) != 0
             || h[12] != want[12])
        snprintf(why, why_size, "%s was written for --layers %llu --hidden "
                 "%llu --heads %llu --seq %llu --vocab %llu --batch %llu "
                 "--seed %llu, which differs from this run", path,
                 (unsigned long long)h[2], (unsigned long long)h[3],
                 (unsigned long long)h[4], (unsigned long long)h[5],
                 (unsigned long long)h[6], (unsigned long long)h[7],
                 (unsigned long long)h[8]);
    else if (size != expected)
        snprintf(why, why_size, "%s is %s: %s%zu bytes, expected %zu", path,
                 size < expected ? "truncated" : "too long",
                 size > expected ? "more than " : "", size - (size > expected),
                 expected);
    else {
        uint64_t stored;
        memcpy(&stored, data + size - sizeof stored, sizeof stored);
        if (fnv1a(fnv_offset, data, size - sizeof stored) != stored)
            snprintf(why, why_size, "%s is corrupted: its checksum does not "
                     "match", path);
        else
            status = 0;
    }
    if (status == 0) {
        size_t bytes = m->params_count * sizeof(real);
        const unsigned char *arrays_at = data + sizeof h;
        memcpy(m->params_memory, arrays_at, bytes);
        memcpy(m->m_memory, arrays_at + bytes, bytes);
        memcpy(m->v_memory, arrays_at + 2 * bytes, bytes);
        s->step = h[9];
        s->sequences = h[10];
        s->data.state = h[11];
        s->steps = h[14];
        s->warmup = h[15];
        s->optimizer = (AdamW){ (real)double_of(h[16]), (real)double_of(h[17]),
                                (real)double_of(h[18]), (real)double_of(h[19]),
                                (real)double_of(h[20]), (real)double_of(h[21]) };
    }
    free(data);
    return status;
}
