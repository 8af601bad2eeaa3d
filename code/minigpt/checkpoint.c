/* Tangled from chapters/13c-sharded.nw and chapters/99i-shards-plumbing.nw; edit the chapters, not this file. */
#define _GNU_SOURCE                              /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainer.h"
static const char magic[8] = "MINIGPT";      /* with its final NUL */
enum { FORMAT_VERSION = 3, HEADER_WORDS = 30 };
enum {                      /* where the header's words lie */
    WORD_STEP = 9, WORD_PARAMS = 12, WORD_REAL = 13, WORD_LAYOUT = 22,
    LAYOUT_WORDS = 6, WORD_RUNS = 28, WORD_HELD = 29
};

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

/* Words 0 to 21: the run's state; `layout` (tp, pp, dp, ZeRO stage, rank,
   ranks) and the shard's runs and numbers follow. */
static void header_words(const TrainingState *s, size_t params,
                         const uint64_t *layout, size_t runs, size_t held,
                         uint64_t *w)
{
    const AdamW *o = &s->optimizer;
    uint64_t words[HEADER_WORDS] = {
        0, FORMAT_VERSION,
        (uint64_t)s->config.layers, (uint64_t)s->config.hidden,
        (uint64_t)s->config.heads, (uint64_t)s->config.seq,
        (uint64_t)s->config.vocab, (uint64_t)s->batch, s->seed, s->step,
        s->sequences, s->data.state, (uint64_t)params, sizeof(real),
        s->steps, s->warmup, bits_of(o->lr), bits_of(o->beta1),
        bits_of(o->beta2), bits_of(o->eps), bits_of(o->weight_decay),
        bits_of(o->clip)
    };
    memcpy(&words[0], magic, sizeof magic);
    memcpy(&words[WORD_LAYOUT], layout, LAYOUT_WORDS * sizeof *layout);
    words[WORD_RUNS] = runs;
    words[WORD_HELD] = held;
    memcpy(w, words, sizeof words);
}

static void state_of_header(const uint64_t *h, TrainingState *s)
{
    s->step = h[9];
    s->sequences = h[10];
    s->data.state = h[11];
    s->steps = h[14];
    s->warmup = h[15];
    s->optimizer = (AdamW){ (real)double_of(h[16]), (real)double_of(h[17]),
                            (real)double_of(h[18]), (real)double_of(h[19]),
                            (real)double_of(h[20]), (real)double_of(h[21]) };
}
typedef struct {            /* numbers that lie together in both arrays */
    size_t whole;           /* where they start in the whole model's    */
    size_t local;           /* ... and in this rank's flat array        */
    size_t count;
} Span;

typedef struct {
    Span *at;
    size_t count, room;
} Spans;

/* `at`, of `count` items of `size` bytes in room for *room, with room for
   one more. */
static void *room_for_one(void *at, size_t count, size_t *room, size_t size)
{
    if (count < *room)
        return at;
    *room = *room ? 2 * *room : 64;
    void *more = realloc(at, *room * size);
    if (more == NULL)
        abort();
    return more;
}

static void spans_add(Spans *s, size_t whole, size_t local, size_t count)
{
    Span *last = s->count > 0 ? &s->at[s->count - 1] : NULL;
    if (last != NULL && last->whole + last->count == whole
        && last->local + last->count == local) {
        last->count += count;
        return;
    }
    s->at = room_for_one(s->at, s->count, &s->room, sizeof *s->at);
    s->at[s->count++] = (Span){ whole, local, count };
}

typedef struct {
    const Model *m;
    Spans *out;
    Spans stage;              /* a pipeline stage's spans, else empty */
    int writes;               /* leave out what another rank writes    */
} Placing;

static void add_stage_run(void *context, const Run *run)
{
    Placing *p = context;
    spans_add(&p->stage, run->whole, run->local, run->count);
}

/* A tensor-parallel run, in the stage's coordinates, through the stage's
   spans to the whole model's. */
static void add_run(void *context, const Run *run)
{
    Placing *p = context;
    const Model *m = p->m;
    if (p->writes && run->replicated && m->tp != NULL && m->tp->rank != 0)
        return;                       /* the group's rank 0 writes them */
    if (m->pp == NULL) {
        spans_add(p->out, run->whole, run->local, run->count);
        return;
    }
    size_t lo = 0, hi = p->stage.count;   /* the first span past run->whole */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->stage.at[mid].local <= run->whole)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t at = run->whole, end = run->whole + run->count;
    for (size_t i = lo > 0 ? lo - 1 : 0; i < p->stage.count && at < end;
         i++) {
        const Span *s = &p->stage.at[i];
        if (s->local + s->count <= at)
            continue;
        size_t upto = s->local + s->count < end ? s->local + s->count : end;
        spans_add(p->out, s->whole + (at - s->local),
                  run->local + (at - run->whole), upto - at);
        at = upto;
    }
}

/* This rank's part of the model as spans of the whole model, in the order
   of its flat array; with `writes`, without the numbers another rank of
   its tensor-parallel group writes. */
static Spans model_spans(const Model *m, int writes)
{
    Spans out = { 0 };
    Placing p = { m, &out, { 0 }, writes };
    if (m->pp != NULL)
        stage_placement(m, add_stage_run, &p);
    tensor_placement(m, add_run, &p);
    free(p.stage.at);
    return out;
}
typedef struct {          /* numbers of the rank's flat array it keeps */
    size_t local, count;
    real *array[3];       /* where: weights, first and second moment   */
} Held;

/* What this rank keeps of its part of the model, by ZeRO's runs, or the
   data axis's d-th of it when every rank of the axis keeps it all. */
static Held *held_pieces(const DataParallel *dp, size_t *count)
{
    const Model *m = dp->model;
    Held *h = malloc(sizeof *h * (size_t)(dp->m_shard != NULL
                                           ? dp->owned + 1 : 1));
    if (h == NULL)
        abort();
    if (dp->m_shard == NULL) {
        size_t N = m->params_count, r = (size_t)dp->rank;
        size_t d = (size_t)dp->ranks, from = N * r / d;
        h[0] = (Held){ from, N * (r + 1) / d - from,
                       { m->params_memory + from, m->m_memory + from,
                         m->v_memory + from } };
        *count = 1;
        return h;
    }
    for (int i = 0; i < dp->owned; i++) {
        const ShardRun *run = &dp->runs[i];
        real *w = dp->weight_shard != NULL ? dp->weight_shard + run->shard
                                           : m->params_memory + run->full;
        h[i] = (Held){ run->full, run->count,
                       { w, dp->m_shard + run->shard,
                         dp->v_shard + run->shard } };
    }
    *count = (size_t)dp->owned;
    return h;
}

typedef struct {          /* numbers of the whole model and their place */
    size_t whole, count;
    real *array[3];       /* in this rank's memory, by kind; NULL: none */
} Piece;

typedef struct {
    Piece *at;
    size_t count, room;
} Pieces;

static void pieces_add(Pieces *p, size_t whole, size_t count, real *w,
                       real *mo, real *v)
{
    p->at = room_for_one(p->at, p->count, &p->room, sizeof *p->at);
    p->at[p->count++] = (Piece){ whole, count, { w, mo, v } };
}

/* Where spans (sorted by local) meet held pieces: the numbers of the whole
   model a rank keeps, for the kinds in `kinds` (a bit each). */
static void held_in_whole(const Spans *s, const Held *h, size_t held,
                          unsigned kinds, Pieces *out)
{
    for (size_t i = 0; i < held; i++) {
        size_t lo = 0, hi = s->count;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (s->at[mid].local + s->at[mid].count <= h[i].local)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t end = h[i].local + h[i].count;
        for (size_t j = lo; j < s->count && s->at[j].local < end; j++) {
            const Span *sp = &s->at[j];
            size_t a = sp->local > h[i].local ? sp->local : h[i].local;
            size_t b = sp->local + sp->count < end ? sp->local + sp->count
                                                   : end;
            if (a >= b)
                continue;
            size_t into = a - h[i].local;
            real *k[3];
            for (int q = 0; q < 3; q++)
                k[q] = kinds & (1u << q) ? h[i].array[q] + into : NULL;
            pieces_add(out, sp->whole + (a - sp->local), b - a, k[0], k[1],
                       k[2]);
        }
    }
}
static void layout_words(const Settings *set, uint64_t *w)
{
    w[0] = (uint64_t)set->mesh.tp;
    w[1] = (uint64_t)set->mesh.pp;
    w[2] = (uint64_t)set->mesh.dp;
    w[3] = (uint64_t)set->parallel.stage;
    w[4] = (uint64_t)set->mesh.rank;
    w[5] = (uint64_t)set->mesh.ranks;
}

static void shard_name(char *name, size_t size, const char *dir, int rank)
{
    snprintf(name, size, "%s/rank%05d.shard", dir, rank);
}
/* The lowest failing rank's reason, on every rank of comm; -1 when some
   rank failed, 0 when none did. */
static int agree_why(int failed, MPI_Comm comm, char *why, size_t why_size)
{
    int rank, ranks, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int mine = failed ? rank : ranks;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == ranks)
        return 0;
    MPI_Bcast(why, (int)why_size, MPI_CHAR, first, comm);
    return -1;
}
int shard_image(Settings *set, const TrainingState *s, ShardImage *image)
{
    DataParallel *dp = &set->parallel;
    const Model *m = dp->model;
    size_t held_count;
    Held *held = held_pieces(dp, &held_count);
    Spans spans = model_spans(m, 1);
    Pieces p = { 0 };
    held_in_whole(&spans, held, held_count, 7, &p);
    free(held);
    free(spans.at);
    size_t n = 0;
    for (size_t i = 0; i < p.count; i++)
        n += p.at[i].count;
    uint64_t layout[LAYOUT_WORDS];
    layout_words(set, layout);
    size_t size = HEADER_WORDS * 8 + p.count * 16 + 3 * n * sizeof(real)
                + 8;
    unsigned char *bytes = malloc(size), *at = bytes;
    if (bytes == NULL) {
        free(p.at);
        return -1;
    }
    header_words(s, whole_params_count(&m->whole), layout, p.count, n,
                 (uint64_t *)at);
    at += HEADER_WORDS * 8;
    for (size_t i = 0; i < p.count; i++) {
        uint64_t run[2] = { p.at[i].whole, p.at[i].count };
        memcpy(at, run, sizeof run);
        at += sizeof run;
    }
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < p.count; i++) {
            size_t b = p.at[i].count * sizeof(real);
            memcpy(at, p.at[i].array[k], b);
            at += b;
        }
    free(p.at);
    uint64_t hash = fnv1a(fnv_offset, bytes, size - 8);
    memcpy(at, &hash, sizeof hash);
    image->bytes = bytes;
    image->size = size;
    image->hash = fnv1a(fnv_offset, bytes, size);
    return 0;
}

void shard_image_free(ShardImage *image)
{
    free(image->bytes);
    image->bytes = NULL;
}
static int sync_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int ok = fsync(fd) == 0 || errno == EINVAL;
    close(fd);
    return ok ? 0 : -1;
}

/* Remove a directory of plain files; 0 when it is gone. */
int remove_checkpoint(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == ENOENT ? 0 : -1;
    char name[8192];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(name, sizeof name, "%s/%s", path, e->d_name);
        remove(name);
    }
    closedir(d);
    return rmdir(path);
}
int sharded_save_begin(Settings *set, const char *path,
                       const TrainingState *s, ShardedSave *save,
                       char *why, size_t why_size)
{
    memset(save, 0, sizeof *save);
    save->step = s->step;
    int failed = 0;
    if (set->rank == 0) {
        snprintf(save->directory, sizeof save->directory, "%s.tmp-%ld",
                 path, (long)getpid());
        remove_checkpoint(save->directory);       /* a stale one of ours */
        if (mkdir(save->directory, 0777) != 0) {
            snprintf(why, why_size, "cannot create %s: %s", save->directory,
                     strerror(errno));
            failed = 1;
        }
    }
    MPI_Bcast(save->directory, sizeof save->directory, MPI_CHAR, 0,
              set->mesh.world);
    if (agree_why(failed, set->mesh.world, why, why_size) != 0)
        return -1;
    snprintf(save->path, sizeof save->path, "%s", path);
    failed = shard_image(set, s, &save->image) != 0;
    if (failed)
        snprintf(why, why_size, "no memory for rank %d's shard of %s",
                 set->rank, path);
    if (agree_why(failed, set->mesh.world, why, why_size) != 0) {
        shard_image_free(&save->image);
        if (set->rank == 0)
            remove_checkpoint(save->directory);
        return -1;
    }
    save->began = 1;
    return 0;
}

int sharded_save_write(ShardedSave *save, int rank, int fail,
                       char *why, size_t why_size)
{
    char name[4300];
    shard_name(name, sizeof name, save->directory, rank);
    if (fail) {
        snprintf(why, why_size, "rank %d did not write %s (the drill of "
                 "--fail-shard-write)", rank, name);
        return -1;
    }
    FILE *f = fopen(name, "wb");
    int ok = f != NULL
          && fwrite(save->image.bytes, 1, save->image.size, f)
             == save->image.size
          && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        snprintf(why, why_size, "rank %d could not write %s (disk full?)",
                 rank, name);
        remove(name);
        return -1;
    }
    save->written = 1;
    return 0;
}
static int write_manifest(const ShardedSave *save, const Settings *set,
                          const uint64_t *sizes, const uint64_t *hashes)
{
    char name[4300];
    snprintf(name, sizeof name, "%s/manifest", save->directory);
    FILE *f = fopen(name, "w");
    if (f == NULL)
        return -1;
    const uint64_t *h = (const uint64_t *)save->image.bytes;
    fprintf(f, "minigpt checkpoint %d\n", FORMAT_VERSION);
    const char *keys[] = { "layers", "hidden", "heads", "seq", "vocab",
                           "batch", "seed" };
    for (int i = 0; i < 7; i++)
        fprintf(f, "%s %llu\n", keys[i], (unsigned long long)h[2 + i]);
    fprintf(f, "real %llu\nparams %llu\nstep %llu\n",
            (unsigned long long)h[WORD_REAL],
            (unsigned long long)h[WORD_PARAMS],
            (unsigned long long)h[WORD_STEP]);
    uint64_t layout[LAYOUT_WORDS];
    layout_words(set, layout);
    fprintf(f, "tp %llu\npp %llu\ndp %llu\nzero %llu\nranks %llu\n",
            (unsigned long long)layout[0], (unsigned long long)layout[1],
            (unsigned long long)layout[2], (unsigned long long)layout[3],
            (unsigned long long)layout[5]);
    for (int r = 0; r < set->mesh.ranks; r++)
        fprintf(f, "shard %d rank%05d.shard %llu %016llx\n", r, r,
                (unsigned long long)sizes[r], (unsigned long long)hashes[r]);
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Rank 0: the manifest, then the directory in place of the old one. */
static int publish(const ShardedSave *save, const Settings *set,
                   const uint64_t *sizes, const uint64_t *hashes,
                   char *why, size_t why_size)
{
    char parent[4096];
    split_path(save->path, parent, sizeof parent);
    if (write_manifest(save, set, sizes, hashes) != 0
        || sync_path(save->directory) != 0) {
        snprintf(why, why_size, "could not write %s/manifest (disk full?); "
                 "the previous checkpoint is untouched", save->directory);
        return -1;
    }
    struct stat st;
    int swap = lstat(save->path, &st) == 0;
    if (swap ? renameat2(AT_FDCWD, save->directory, AT_FDCWD, save->path,
                         RENAME_EXCHANGE) != 0
             : rename(save->directory, save->path) != 0) {
        snprintf(why, why_size, "could not rename %s to %s: %s; the "
                 "previous checkpoint is untouched", save->directory,
                 save->path, strerror(errno));
        return -1;
    }
    if (swap)                 /* the old checkpoint, now at the temporary */
        remove_checkpoint(save->directory);
    if (sync_path(parent) != 0) {
        snprintf(why, why_size, "wrote %s, but could not sync its directory "
                 "to the disk", save->path);
        return -1;
    }
    return 0;
}

int sharded_save_finish(Settings *set, ShardedSave *save, int failed,
                        char *why, size_t why_size)
{
    MPI_Comm world = set->mesh.world;
    int status = agree_why(failed, world, why, why_size);
    uint64_t mine[2] = { save->image.size, save->image.hash };
    uint64_t *all = set->rank == 0
                  ? malloc(sizeof *all * 2 * (size_t)set->mesh.ranks) : NULL;
    if (set->rank == 0 && all == NULL)
        abort();
    if (status == 0) {
        MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, world);
        int bad = 0;
        if (set->rank == 0) {
            uint64_t *sizes = malloc(sizeof *sizes * (size_t)set->mesh.ranks);
            uint64_t *hashes = malloc(sizeof *sizes
                                      * (size_t)set->mesh.ranks);
            if (sizes == NULL || hashes == NULL)
                abort();
            for (int r = 0; r < set->mesh.ranks; r++) {
                sizes[r] = all[2 * r];
                hashes[r] = all[2 * r + 1];
            }
            bad = publish(save, set, sizes, hashes, why, why_size) != 0;
            free(sizes);
            free(hashes);
        }
        status = agree_why(bad, world, why, why_size);
    }
    free(all);
    if (status != 0) {                /* nothing of it stays on the disk */
        char name[4300];
        shard_name(name, sizeof name, save->directory, set->rank);
        if (save->written)
            remove(name);
        MPI_Barrier(world);
        if (set->rank == 0)
            remove_checkpoint(save->directory);
    }
    shard_image_free(&save->image);
    return status;
}

int checkpoint_save_sharded(Settings *set, const char *path,
                            const TrainingState *s, char *why,
                            size_t why_size)
{
    ShardedSave save;
    if (sharded_save_begin(set, path, s, &save, why, why_size) != 0)
        return -1;
    int failed = sharded_save_write(&save, set->rank,
                                    set->fail_shard == set->rank, why,
                                    why_size) != 0;
    return sharded_save_finish(set, &save, failed, why, why_size);
}

/* 0 if `path` can take a checkpoint: absent in a directory where one can
   be made, or a checkpoint already; 2 after one line. */
int check_checkpoint_path(const char *command, const char *flag,
                          const char *path)
{
    struct stat st;
    char probe[4300];
    if (path == NULL)
        return 0;
    if (lstat(path, &st) == 0) {
        snprintf(probe, sizeof probe, "%s/manifest", path);
        if (!S_ISDIR(st.st_mode)) {
            complain(command, "%s: %s is not a directory, and a checkpoint "
                     "is a directory of shards: name a new path", flag,
                     path);
            return 2;
        }
        if (access(probe, F_OK) != 0) {
            complain(command, "%s: %s is a directory with no manifest, not "
                     "a checkpoint that may be replaced: name a new path",
                     flag, path);
            return 2;
        }
    }
    snprintf(probe, sizeof probe, "%s.tmp-%ld", path, (long)getpid());
    if (mkdir(probe, 0777) != 0) {
        complain(command, "%s: cannot write %s: %s", flag, path,
                 strerror(errno));
        return 2;
    }
    rmdir(probe);
    return 0;
}
typedef struct {
    uint64_t words[16];       /* layers .. seed, real, params, step, tp,
                                 pp, dp, zero, ranks                     */
    int shards;
    char (*file)[64];         /* (shards) each shard's name            */
    uint64_t *bytes, *hash;   /* (shards) its size and FNV-1a          */
} Manifest;

enum {                        /* the manifest's words, in order */
    M_LAYERS, M_HIDDEN, M_HEADS, M_SEQ, M_VOCAB, M_BATCH, M_SEED, M_REAL,
    M_PARAMS, M_STEP, M_TP, M_PP, M_DP, M_ZERO, M_RANKS, MANIFEST_WORDS
};
static const char *const manifest_keys[MANIFEST_WORDS] = {
    "layers", "hidden", "heads", "seq", "vocab", "batch", "seed", "real",
    "params", "step", "tp", "pp", "dp", "zero", "ranks"
};

static void manifest_free(Manifest *mf)
{
    free(mf->file);
    free(mf->bytes);
    free(mf->hash);
}

static int read_manifest(const char *path, Manifest *mf, char *why,
                         size_t why_size)
{
    char name[4300], key[64];
    memset(mf, 0, sizeof *mf);
    snprintf(name, sizeof name, "%s/manifest", path);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
        uint64_t h[2] = { 0, 0 };
        FILE *old = fopen(path, "rb");
        int single = old != NULL && fread(h, 1, sizeof h, old) == sizeof h
                  && memcmp(h, magic, sizeof magic) == 0;
        if (old != NULL)
            fclose(old);
        if (single)
            snprintf(why, why_size, "%s is a checkpoint of format version "
                     "%llu, one file; this minigpt reads format %d, a "
                     "directory of shards", path, (unsigned long long)h[1],
                     FORMAT_VERSION);
        else
            snprintf(why, why_size, "%s is a file, not a checkpoint: a "
                     "checkpoint is a directory of shards and a manifest",
                     path);
        return -1;
    }
    FILE *f = fopen(name, "r");
    if (f == NULL) {
        snprintf(why, why_size, "cannot read %s: %s", name, strerror(errno));
        return -1;
    }
    int version = 0, ok = fscanf(f, "minigpt checkpoint %d", &version) == 1
                          && version == FORMAT_VERSION;
    for (int i = 0; ok && i < MANIFEST_WORDS; i++) {
        unsigned long long v;
        ok = fscanf(f, "%63s %llu", key, &v) == 2
          && strcmp(key, manifest_keys[i]) == 0;
        mf->words[i] = v;
    }
    int ranks = ok && mf->words[M_RANKS] > 0
                && mf->words[M_RANKS] <= 1u << 20
              ? (int)mf->words[M_RANKS] : 0;
    ok = ok && ranks > 0;
    if (ok) {
        mf->shards = ranks;
        mf->file = calloc((size_t)ranks, sizeof *mf->file);
        mf->bytes = calloc((size_t)ranks, sizeof *mf->bytes);
        mf->hash = calloc((size_t)ranks, sizeof *mf->hash);
        if (!mf->file || !mf->bytes || !mf->hash)
            abort();
    }
    for (int r = 0; ok && r < ranks; r++) {
        int at;
        unsigned long long b, h;
        ok = fscanf(f, "%63s %d %63s %llu %llx", key, &at, mf->file[r], &b,
                    &h) == 5 && strcmp(key, "shard") == 0 && at == r
          && strchr(mf->file[r], '/') == NULL;
        mf->bytes[r] = b;
        mf->hash[r] = h;
    }
    fclose(f);
    if (!ok) {
        snprintf(why, why_size, "%s is not a minigpt manifest of format %d",
                 name, FORMAT_VERSION);
        manifest_free(mf);
        return -1;
    }
    return 0;
}

/* The manifest against this run: the shape, the seed and the batch. */
static int check_shape(const char *path, const Manifest *mf,
                       const TrainingState *s, size_t params, char *why,
                       size_t why_size)
{
    const uint64_t *w = mf->words;
    uint64_t want[7] = { (uint64_t)s->config.layers,
                         (uint64_t)s->config.hidden,
                         (uint64_t)s->config.heads, (uint64_t)s->config.seq,
                         (uint64_t)s->config.vocab, (uint64_t)s->batch,
                         s->seed };
    if (w[M_REAL] != sizeof(real)) {
        snprintf(why, why_size, "%s holds %llu-byte numbers; this build "
                 "uses %zu-byte ones", path, (unsigned long long)w[M_REAL],
                 sizeof(real));
        return -1;
    }
    if (memcmp(w, want, sizeof want) != 0 || w[M_PARAMS] != params) {
        snprintf(why, why_size, "%s was written for --layers %llu --hidden "
                 "%llu --heads %llu --seq %llu --vocab %llu --batch %llu "
                 "--seed %llu, which differs from this run", path,
                 (unsigned long long)w[0], (unsigned long long)w[1],
                 (unsigned long long)w[2], (unsigned long long)w[3],
                 (unsigned long long)w[4], (unsigned long long)w[5],
                 (unsigned long long)w[6]);
        return -1;
    }
    return 0;
}
typedef struct {              /* a run of a shard, and where it lies */
    uint64_t whole, count;
    uint64_t at;              /* its first number among the shard's  */
} ShardRunOnDisk;

typedef struct {
    int fd;
    uint64_t held;            /* numbers in the shard, per kind      */
    ShardRunOnDisk *runs;     /* sorted by whole                     */
    size_t count;
    uint64_t header[HEADER_WORDS];
} OpenShard;

static int by_whole(const void *a, const void *b)
{
    uint64_t x = ((const ShardRunOnDisk *)a)->whole;
    uint64_t y = ((const ShardRunOnDisk *)b)->whole;
    return x < y ? -1 : x > y;
}

static int read_exactly(int fd, void *into, size_t size, off_t at)
{
    unsigned char *p = into;
    while (size > 0) {
        ssize_t n = pread(fd, p, size, at);
        if (n <= 0)
            return -1;
        p += n;
        at += n;
        size -= (size_t)n;
    }
    return 0;
}

static int shard_hash_matches(int fd, uint64_t size, uint64_t want)
{
    unsigned char buffer[1 << 16];
    uint64_t hash = fnv_offset;
    off_t at = 0;
    while ((uint64_t)at < size) {
        size_t n = size - (uint64_t)at < sizeof buffer
                 ? (size_t)(size - (uint64_t)at) : sizeof buffer;
        if (read_exactly(fd, buffer, n, at) != 0)
            return 0;
        hash = fnv1a(hash, buffer, n);
        at += (off_t)n;
    }
    return hash == want;
}

/* Open shard r and check it against the manifest: present, of the
   manifest's step and layout, of its size; its checksum too when
   `checksum`. */
static int open_shard(const char *path, const Manifest *mf, int r,
                      int checksum, OpenShard *o, char *why,
                      size_t why_size)
{
    char name[4300];
    snprintf(name, sizeof name, "%s/%s", path, mf->file[r]);
    memset(o, 0, sizeof *o);
    o->fd = open(name, O_RDONLY);
    if (o->fd < 0) {
        snprintf(why, why_size, "%s is missing: the checkpoint has %d "
                 "shards, and every one is needed", name, mf->shards);
        return -1;
    }
    struct stat st;
    uint64_t *h = o->header;
    const uint64_t *w = mf->words;
    uint64_t size = fstat(o->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    if (size < HEADER_WORDS * 8
        || read_exactly(o->fd, h, HEADER_WORDS * 8, 0) != 0
        || memcmp(h, magic, sizeof magic) != 0) {
        snprintf(why, why_size, "%s is torn: it does not start with a "
                 "shard's header", name);
        return -1;
    }
    if (h[1] != FORMAT_VERSION) {
        snprintf(why, why_size, "%s has format version %llu, not %d", name,
                 (unsigned long long)h[1], FORMAT_VERSION);
        return -1;
    }
    uint64_t layout[LAYOUT_WORDS] = { w[M_TP], w[M_PP], w[M_DP], w[M_ZERO],
                                      (uint64_t)r, w[M_RANKS] };
    if (h[WORD_STEP] != w[M_STEP]) {
        snprintf(why, why_size, "%s holds step %llu, and the manifest step "
                 "%llu: shards of different checkpoints", name,
                 (unsigned long long)h[WORD_STEP],
                 (unsigned long long)w[M_STEP]);
        return -1;
    }
    if (memcmp(&h[WORD_LAYOUT], layout, sizeof layout) != 0) {
        const uint64_t *l = &h[WORD_LAYOUT];
        snprintf(why, why_size, "%s is rank %llu of --tp %llu --pp %llu "
                 "--dp %llu --zero %llu, and the manifest says rank %d of "
                 "--tp %llu --pp %llu --dp %llu --zero %llu", name,
                 (unsigned long long)l[4], (unsigned long long)l[0],
                 (unsigned long long)l[1], (unsigned long long)l[2],
                 (unsigned long long)l[3], r, (unsigned long long)w[M_TP],
                 (unsigned long long)w[M_PP], (unsigned long long)w[M_DP],
                 (unsigned long long)w[M_ZERO]);
        return -1;
    }
    if (memcmp(&h[2], w, 7 * sizeof *w) != 0 || h[WORD_REAL] != w[M_REAL]
        || h[WORD_PARAMS] != w[M_PARAMS]) {
        snprintf(why, why_size, "%s is of another model than its manifest",
                 name);
        return -1;
    }
    uint64_t runs = h[WORD_RUNS], held = h[WORD_HELD];
    uint64_t expected = HEADER_WORDS * 8 + runs * 16
                      + 3 * held * sizeof(real) + 8;
    if (size != mf->bytes[r] || size != expected) {
        snprintf(why, why_size, "%s is %s: %llu bytes, and the manifest "
                 "says %llu", name, size < mf->bytes[r] ? "truncated"
                 : "too long", (unsigned long long)size,
                 (unsigned long long)mf->bytes[r]);
        return -1;
    }
    if (checksum && !shard_hash_matches(o->fd, size, mf->hash[r])) {
        snprintf(why, why_size, "%s is corrupted: its checksum does not "
                 "match the manifest's", name);
        return -1;
    }
    o->held = held;
    o->count = (size_t)runs;
    o->runs = malloc(sizeof *o->runs * (o->count + 1));
    uint64_t *table = malloc(16 * (o->count + 1));
    if (o->runs == NULL || table == NULL
        || read_exactly(o->fd, table, o->count * 16, HEADER_WORDS * 8) != 0) {
        free(table);
        snprintf(why, why_size, "cannot read %s", name);
        return -1;
    }
    uint64_t at = 0;
    for (size_t i = 0; i < o->count; i++) {
        o->runs[i] = (ShardRunOnDisk){ table[2 * i], table[2 * i + 1], at };
        at += table[2 * i + 1];
    }
    free(table);
    qsort(o->runs, o->count, sizeof *o->runs, by_whole);
    return 0;
}

static void close_shard(OpenShard *o)
{
    if (o->fd >= 0)
        close(o->fd);
    free(o->runs);
}

/* Read from shard o every number of the pieces it holds; adds to *found
   the numbers read (counted once, for the weights). */
static int read_pieces(const OpenShard *o, const Pieces *p, size_t *found)
{
    off_t data = HEADER_WORDS * 8 + (off_t)o->count * 16;
    for (size_t i = 0; i < p->count; i++) {
        const Piece *pc = &p->at[i];
        size_t lo = 0, hi = o->count, end = pc->whole + pc->count;
        while (lo < hi) {         /* the first run that ends after whole */
            size_t mid = (lo + hi) / 2;
            if (o->runs[mid].whole + o->runs[mid].count <= pc->whole)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < o->count && o->runs[j].whole < end; j++) {
            const ShardRunOnDisk *r = &o->runs[j];
            size_t a = r->whole > pc->whole ? r->whole : pc->whole;
            size_t b = r->whole + r->count < end ? r->whole + r->count : end;
            if (a >= b)
                continue;
            for (int k = 0; k < 3; k++) {
                if (pc->array[k] == NULL)
                    continue;
                off_t at = data + (off_t)((k * o->held + r->at
                                            + (a - r->whole)) * sizeof(real));
                if (read_exactly(o->fd, pc->array[k] + (a - pc->whole),
                                 (b - a) * sizeof(real), at) != 0)
                    return -1;
            }
            *found += b - a;
        }
    }
    return 0;
}

/* Every shard checked; the pieces read from those that hold them. Rank
   `rank` of `ranks` checks the checksums of every ranks-th shard. */
static int read_checkpoint(const char *path, const Manifest *mf,
                           const Pieces *p, int rank, int ranks,
                           TrainingState *s, char *why, size_t why_size)
{
    size_t found = 0, wanted = 0;
    for (size_t i = 0; i < p->count; i++)
        wanted += p->at[i].count;
    for (int r = 0; r < mf->shards; r++) {
        OpenShard o;
        int failed = open_shard(path, mf, r, r % ranks == rank, &o, why,
                                why_size) != 0;
        if (!failed && r == 0)
            state_of_header(o.header, s);
        if (!failed && read_pieces(&o, p, &found) != 0) {
            snprintf(why, why_size, "cannot read %s/%s", path, mf->file[r]);
            failed = 1;
        }
        close_shard(&o);
        if (failed)
            return -1;
    }
    if (found != wanted) {
        snprintf(why, why_size, "the shards of %s hold %zu of the %zu "
                 "numbers this rank needs", path, found, wanted);
        return -1;
    }
    return 0;
}

int checkpoint_load_sharded(Settings *set, const char *path,
                            TrainingState *s, char *why, size_t why_size)
{
    DataParallel *dp = &set->parallel;
    const Model *m = dp->model;
    Manifest mf;
    int failed = read_manifest(path, &mf, why, why_size) != 0
              || check_shape(path, &mf, s, whole_params_count(&m->whole),
                             why, why_size) != 0;
    if (!failed) {
        Spans all = model_spans(m, 0);
        size_t held_count;
        Held *held = held_pieces(dp, &held_count);
        Held whole_part = { 0, m->params_count,
                            { m->params_memory, m->m_memory, m->v_memory } };
        Pieces p = { 0 };
        unsigned whole_kinds = (m->params_memory != NULL)
                             | (dp->m_shard == NULL ? 6u : 0u);
        if (whole_kinds != 0)     /* what the model keeps of its part */
            held_in_whole(&all, &whole_part, 1, whole_kinds, &p);
        if (whole_kinds != 7)     /* what ZeRO keeps of it */
            held_in_whole(&all, held, held_count, 7u & ~whole_kinds, &p);
        failed = read_checkpoint(path, &mf, &p, set->rank, set->mesh.ranks,
                                 s, why, why_size) != 0;
        free(p.at);
        free(held);
        free(all.at);
        manifest_free(&mf);
    }
    return agree_why(failed, set->mesh.world, why, why_size);
}

int checkpoint_load_whole(const char *path, Model *whole, TrainingState *s,
                          char *why, size_t why_size)
{
    Manifest mf;
    if (read_manifest(path, &mf, why, why_size) != 0)
        return -1;
    int status = check_shape(path, &mf, s, whole->params_count, why,
                             why_size);
    if (status == 0) {
        Pieces p = { 0 };
        pieces_add(&p, 0, whole->params_count, whole->params_memory,
                   whole->m_memory, whole->v_memory);
        status = read_checkpoint(path, &mf, &p, 0, 1, s, why, why_size);
        free(p.at);
    }
    manifest_free(&mf);
    return status;
}
