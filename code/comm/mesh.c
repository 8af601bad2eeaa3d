/* Tangled from chapters/08-sharded-state.nw, chapters/09-tensor-parallel.nw, chapters/95-parallel-plumbing.nw, chapters/99-mesh-plumbing.nw and chapters/99d-hierarchical.nw; edit the chapters, not this file. */
#include <stdio.h>
#include <stdlib.h>

#include "mesh.h"

int mesh_refuses(int ranks, int tp, int pp, int dp, char *why,
                 size_t why_size)
{
    long product = (long)tp * pp * dp;
    if (tp < 1 || pp < 1 || dp < 1)
        snprintf(why, why_size, "--tp %d, --pp %d and --dp %d must each be "
                 "at least 1", tp, pp, dp);
    else if (product == ranks)
        return 0;
    else if (tp == 1 && pp == 1)
        snprintf(why, why_size, "--dp %d disagrees with the %d %s started "
                 "by mpiexec", dp, ranks, ranks == 1 ? "rank" : "ranks");
    else
        snprintf(why, why_size, "--tp %d × --pp %d × --dp %d asks for %ld "
                 "ranks; mpiexec started %d", tp, pp, dp, product, ranks);
    return 1;
}

int mesh_init(Mesh *mesh, MPI_Comm world, int tp, int pp, int dp,
              char *why, size_t why_size)
{
    *mesh = (Mesh){ .world = world, .tp = tp, .pp = pp, .dp = dp,
                    .tp_comm = MPI_COMM_NULL, .pp_comm = MPI_COMM_NULL,
                    .dp_comm = MPI_COMM_NULL,
                    .prev = MPI_PROC_NULL, .next = MPI_PROC_NULL };
    MPI_Comm_rank(world, &mesh->rank);
    MPI_Comm_size(world, &mesh->ranks);
    if (mesh_refuses(mesh->ranks, tp, pp, dp, why, why_size))
        return 2;
    int r = mesh->rank;
    mesh->tp_rank = r % tp;
    mesh->pp_rank = r / tp % pp;
    mesh->dp_rank = r / (tp * pp);
    int tr = mesh->tp_rank, pr = mesh->pp_rank, dr = mesh->dp_rank;
    MPI_Comm_split(world, pr + pp * dr, tr, &mesh->tp_comm);
    MPI_Comm_split(world, tr + tp * dr, pr, &mesh->pp_comm);
    MPI_Comm_split(world, tr + tp * pr, dr, &mesh->dp_comm);
    if (pr > 0)
        mesh->prev = r - tp;
    if (pr < pp - 1)
        mesh->next = r + tp;
    return 0;
}
void mesh_free(Mesh *mesh)
{
    MPI_Comm *comms[] = { &mesh->tp_comm, &mesh->pp_comm, &mesh->dp_comm };
    for (int i = 0; i < 3; i++)
        if (*comms[i] != MPI_COMM_NULL)
            MPI_Comm_free(comms[i]);
}

int ranks_agree(int status, MPI_Comm comm)
{
    int worst = status;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm);
    return worst;
}

MPI_Datatype float_type(size_t bytes)
{
    return bytes == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
}

#include <time.h>

static struct {
    int group;                 /* consecutive world ranks; 0: no groups   */
    double delay_s;            /* each send across waits this first ...   */
    double bytes_per_second;   /* ... and its bytes at this (0: no limit) */
} slow_link;

void slow_link_between_groups(int group, double delay_s,
                              double bytes_per_second)
{
    slow_link.group = group;
    slow_link.delay_s = delay_s;
    slow_link.bytes_per_second = bytes_per_second;
}

static int world_rank(MPI_Comm comm, int rank)
{
    MPI_Group group, world;
    int in_world;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(group, 1, &rank, world, &in_world);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    return in_world;
}

/* Sleep out what a send of `bytes` to rank `dest` of comm takes on the
   slow link, if it crosses from one group to another. */
static void cross_slow_link(MPI_Comm comm, int dest, double bytes)
{
    if (slow_link.group == 0 || dest < 0
        || (slow_link.delay_s == 0 && slow_link.bytes_per_second == 0))
        return;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me / slow_link.group == world_rank(comm, dest) / slow_link.group)
        return;                                  /* inside the group */
    double wait = slow_link.delay_s;
    if (slow_link.bytes_per_second > 0)
        wait += bytes / slow_link.bytes_per_second;
    time_t whole = (time_t)wait;
    struct timespec left = { whole, (long)((wait - (double)whole) * 1e9) };
    while (nanosleep(&left, &left) != 0)
        ;                                        /* a signal: sleep on */
}
static unsigned long long bytes_sent;

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    int size = 0;
    PMPI_Type_size(sendtype, &size);
    bytes_sent += (unsigned long long)sendcount * (unsigned long long)size;
    cross_slow_link(comm, dest, (double)sendcount * size);
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                         recvcount, recvtype, source, recvtag, comm, status);
}

unsigned long long mpi_bytes_sent(void)
{
    return bytes_sent;
}
/* The world ranks of comm's members, in comm's order: "2,3". */
static void members(const Mesh *mesh, MPI_Comm comm, char *text,
                    size_t size)
{
    MPI_Group group, world;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(mesh->world, &world);
    int n, used = 0;
    MPI_Group_size(group, &n);
    text[0] = '\0';
    for (int i = 0; i < n && (size_t)used < size; i++) {
        int w;
        MPI_Group_translate_ranks(group, 1, &i, world, &w);
        used += snprintf(text + used, size - (size_t)used, "%s%d",
                         i > 0 ? "," : "", w);
    }
    MPI_Group_free(&group);
    MPI_Group_free(&world);
}

static const char *neighbour(int rank, char *text, size_t size)
{
    if (rank == MPI_PROC_NULL)
        return "-";
    snprintf(text, size, "%d", rank);
    return text;
}

void mesh_print(const Mesh *mesh, FILE *out)
{
    enum { LINE = 512 };
    char line[LINE], tp[128], pp[128], dp[128], prev[16], next[16];
    members(mesh, mesh->tp_comm, tp, sizeof tp);
    members(mesh, mesh->pp_comm, pp, sizeof pp);
    members(mesh, mesh->dp_comm, dp, sizeof dp);
    snprintf(line, sizeof line, "rank %d: tp %d of %d [%s], pp %d of %d "
             "[%s], dp %d of %d [%s], prev %s, next %s", mesh->rank,
             mesh->tp_rank, mesh->tp, tp, mesh->pp_rank, mesh->pp, pp,
             mesh->dp_rank, mesh->dp, dp,
             neighbour(mesh->prev, prev, sizeof prev),
             neighbour(mesh->next, next, sizeof next));
    char *all = mesh->rank == 0 ? malloc((size_t)mesh->ranks * LINE) : NULL;
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, mesh->world);
    if (mesh->rank != 0)
        return;
    fprintf(out, "mesh: --tp %d × --pp %d × --dp %d on %d %s\n", mesh->tp,
            mesh->pp, mesh->dp, mesh->ranks,
            mesh->ranks == 1 ? "rank" : "ranks");
    for (int r = 0; all != NULL && r < mesh->ranks; r++)
        fprintf(out, "%s\n", all + (size_t)r * LINE);
    free(all);
}
static double step_parts[STEP_PARTS];

void step_clock_add(StepPart part, double seconds)
{
    step_parts[part] += seconds;
}

double step_clock_stop(StepPart part, double started)
{
    double now = MPI_Wtime();
    step_parts[part] += now - started;
    return now;
}

double step_clock_seconds(StepPart part)
{
    return step_parts[part];
}

double step_clock_waiting(void)
{
    return step_parts[PART_TP] + step_parts[PART_PP] + step_parts[PART_DP]
         + step_parts[PART_BUBBLE];
}

void step_clock_reset(void)
{
    for (int part = 0; part < STEP_PARTS; part++)
        step_parts[part] = 0;
}

const char *step_part_name(StepPart part)
{
    static const char *const names[STEP_PARTS]
        = { "tp", "pp", "dp", "bubble", "optimizer" };
    return names[part];
}
