/* Tangled from chapters/13d-async.nw and chapters/99j-async-plumbing.nw; edit the chapters, not this file. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainer.h"

typedef struct Checkpointer {
    pthread_t thread;
    int writing;              /* a write is in flight on the thread      */
    MPI_Comm comm;            /* the writers' own copy of the world      */
    Settings settings;        /* the run's, with comm for its world      */
    ShardedSave save;         /* the write: its copy of this rank's shard */
    int status;               /* its outcome: 0, or -1 with why          */
    char why[1024];
    double *stall;            /* (most) seconds each save held training  */
    int saves, most;
} Checkpointer;
static void *write_in_background(void *writer)
{
    Checkpointer *c = writer;
    Settings *set = &c->settings;
    int failed = sharded_save_write(&c->save, set->rank,
                                    set->fail_shard == set->rank, c->why,
                                    sizeof c->why) != 0;
    fault_drill(set, (int)c->save.step);     /* before the ranks agree */
    c->status = sharded_save_finish(set, &c->save, failed, c->why,
                                    sizeof c->why);
    return NULL;
}
/* Wait for the write in flight, if there is one; 0, or -1 with why. */
static int finish_write(Checkpointer *c, char *why, size_t why_size)
{
    if (c->writing) {
        pthread_join(c->thread, NULL);
        c->writing = 0;
    }
    if (c->status != 0)
        snprintf(why, why_size, "the checkpoint of step %llu: %s",
                 (unsigned long long)c->save.step, c->why);
    return c->status;
}

static int start_write(Settings *set, Checkpointer *c,
                       const TrainingState *s, char *why, size_t why_size)
{
    if (sharded_save_begin(set, set->save, s, &c->save, why, why_size) != 0)
        return -1;                          /* on every rank, with why */
    c->settings = *set;
    c->settings.mesh.world = c->comm;        /* the writers' collectives */
    c->writing = 1;
    if (pthread_create(&c->thread, NULL, write_in_background, c) != 0) {
        write_in_background(c);                  /* here, then, in turn */
        c->writing = 0;
        return finish_write(c, why, why_size);
    }
    return 0;
}
static Checkpointer *checkpointer_of(Settings *set)
{
    if (set->checkpointer == NULL) {
        Checkpointer *c = calloc(1, sizeof *c);
        if (c != NULL) {
            c->most = set->steps / (set->save_every > 0 ? set->save_every
                                                        : set->steps + 1) + 2;
            c->stall = malloc(sizeof(double) * (size_t)c->most);
            if (set->async_save)
                MPI_Comm_dup(set->mesh.world, &c->comm);
        }
        if (c == NULL || c->stall == NULL)
            abort();
        set->checkpointer = c;
    }
    return set->checkpointer;
}

static void record_stall(Checkpointer *c, double seconds)
{
    if (c->saves < c->most)
        c->stall[c->saves++] = seconds;
}

/* The run's last save: wait for any write, report, and free the record. */
static void checkpoints_end(Settings *set, Checkpointer *c, char *why,
                            size_t why_size)
{
    finish_write(c, why, why_size);
    MPI_Allreduce(MPI_IN_PLACE, c->stall, c->saves, MPI_DOUBLE, MPI_MAX,
                  set->mesh.world);
    int between = c->saves - 1;              /* the saves between steps */
    set->checkpoint_saves = c->saves;
    set->checkpoint_final_s = c->stall[c->saves - 1];
    set->checkpoint_stall_s = between == 0 ? set->checkpoint_final_s
        : median_in_place(c->stall, between);
    if (set->async_save)
        MPI_Comm_free(&c->comm);
    free(c->stall);
    free(c);
    set->checkpointer = NULL;
}
int checkpoint_now(Settings *set, const TrainingState *s, int last,
                   char *why, size_t why_size)
{
    Checkpointer *c = checkpointer_of(set);
    double started = seconds_now();
    int status = finish_write(c, why, why_size);         /* the one before */
    if (status == 0 && set->async_save && !last)
        status = start_write(set, c, s, why, why_size);
    else if (status == 0)
        status = save_checkpoint(set, s, why, why_size);
    int agreed = ranks_agree(status != 0 ? 2 : 0, set->mesh.world);
    record_stall(c, seconds_now() - started);
    if (last || agreed != 0)             /* the run ends here: report, free */
        checkpoints_end(set, c, why, why_size);
    return set->rank == 0 ? status : 0;            /* rank 0 says why */
}
void fault_drill(const Settings *set, int step)
{
    static atomic_flag called = ATOMIC_FLAG_INIT;
    if (set->fault_step != step || set->rank != set->fault_rank)
        return;
    if (atomic_flag_test_and_set(&called))
        for (;;)                 /* the other thread is saying it: wait */
            pause();
    fprintf(stderr, "minigpt: rank %d kills itself after step %d "
            "(--fault-at-step)\n", set->rank, step);
    raise(SIGKILL);
}
