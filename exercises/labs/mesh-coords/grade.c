/* exercises/labs/mesh-coords/grade.c: the autograder of the mesh lab.

   The book's mesh_init (code/comm/mesh.c) is run for every rank of every
   layout in one process, without mpiexec: this file supplies the three
   MPI calls it makes, MPI_Comm_rank and MPI_Comm_size (which answer with
   the rank and the layout being asked about) and MPI_Comm_split (which
   records the colour and key it is given), as a profiling library would.
   The student's places and peers are compared with what mesh_init
   computes and with the groups its colours and keys make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_check.h"
#include "mesh.h"
#include "mesh_coords.h"

enum { MOST_RANKS = 512, AXES = 3 };

static int asked_rank, asked_ranks, splits;
static int split_colour[AXES], split_key[AXES];

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    (void)comm;
    *rank = asked_rank;
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    (void)comm;
    *size = asked_ranks;
    return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    (void)comm;
    if (splits < AXES) {
        split_colour[splits] = color;
        split_key[splits] = key;
    }
    splits++;
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* One layout's answers, every rank: the book's, or the student's. */
typedef struct {
    int coords[MOST_RANKS][AXES];
    int colour[MOST_RANKS][AXES], key[MOST_RANKS][AXES];
    int prev[MOST_RANKS], next[MOST_RANKS];
} Layout;

static const char *const axis_names[AXES] = { "tp", "pp", "dp" };

static void set_rank(Layout *l, int r, const int *coords, const int *colour,
                     const int *key, int prev, int next)
{
    for (int a = 0; a < AXES; a++) {
        l->coords[r][a] = coords[a];
        l->colour[r][a] = colour[a];
        l->key[r][a] = key[a];
    }
    l->prev[r] = prev;
    l->next[r] = next;
}

/* The book's answers, from mesh_init; 0 if it refused the layout. */
static int book_layout(int tp, int pp, int dp, Layout *b)
{
    int n = tp * pp * dp;
    for (int r = 0; r < n; r++) {
        Mesh mesh;
        char why[200];
        asked_rank = r;
        asked_ranks = n;
        splits = 0;
        if (mesh_init(&mesh, MPI_COMM_WORLD, tp, pp, dp, why, sizeof why)
            || splits != AXES) {
            fprintf(stderr, "grade: mesh_init refused --tp %d --pp %d --dp "
                    "%d: %s\n", tp, pp, dp, why);
            return 0;
        }
        int c[AXES] = { mesh.tp_rank, mesh.pp_rank, mesh.dp_rank };
        set_rank(b, r, c, split_colour, split_key, mesh.prev, mesh.next);
    }
    return 1;
}

static void student_layout(int tp, int pp, int dp, Layout *s)
{
    int n = tp * pp * dp;
    for (int r = 0; r < n; r++) {
        MeshPlace p;
        memset(&p, 0, sizeof p);
        mesh_place(r, tp, pp, dp, &p);
        int c[AXES] = { p.tp_rank, p.pp_rank, p.dp_rank };
        int colour[AXES] = { p.tp_colour, p.pp_colour, p.dp_colour };
        int key[AXES] = { p.tp_key, p.pp_key, p.dp_key };
        set_rank(s, r, c, colour, key, p.prev, p.next);
    }
}

/* The world ranks of r's group along axis a: those with r's colour, in
   the order MPI_Comm_split gives them (by key, then by world rank).
   Returns how many. */
static int group_of(const Layout *l, int n, int r, int a, int *members)
{
    int m = 0;
    for (int q = 0; q < n; q++) {
        if (l->colour[q][a] != l->colour[r][a])
            continue;
        int at = m++;
        while (at > 0 && l->key[members[at - 1]][a] > l->key[q][a]) {
            members[at] = members[at - 1];
            at--;
        }
        members[at] = q;
    }
    return m;
}

static void list(char *text, size_t size, const int *v, int n)
{
    int used = snprintf(text, size, "[");
    for (int i = 0; i < n && i < 16 && (size_t)used < size; i++)
        used += snprintf(text + used, size - (size_t)used, "%s%d",
                         i ? "," : "", v[i]);
    if ((size_t)used < size)
        snprintf(text + used, size - (size_t)used, "%s]", n > 16 ? ",..."
                                                                 : "");
}

enum { CHECK_COORDS, CHECK_GROUP, CHECK_NEIGHBOURS = CHECK_GROUP + AXES,
       CHECK_PEERS, CHECKS = CHECK_PEERS + AXES };

static char failed[CHECKS][400];
static int layouts;

static void fail(int check, const char *format, ...)
{
    if (failed[check][0])
        return;                                  /* the first one only */
    va_list args;
    va_start(args, format);
    vsnprintf(failed[check], sizeof failed[check], format, args);
    va_end(args);
}

static void compare(int tp, int pp, int dp, Layout *b, Layout *s)
{
    int n = tp * pp * dp;
    if (!book_layout(tp, pp, dp, b))
        exit(2);
    student_layout(tp, pp, dp, s);
    layouts++;
    for (int r = 0; r < n; r++) {
        const int *bc = b->coords[r], *sc = s->coords[r];
        if (memcmp(bc, sc, sizeof b->coords[r]) != 0)
            fail(CHECK_COORDS, "--tp %d --pp %d --dp %d, rank %d: got (%d, "
                 "%d, %d), want (%d, %d, %d)", tp, pp, dp, r, sc[0], sc[1],
                 sc[2], bc[0], bc[1], bc[2]);
        if (s->prev[r] != b->prev[r] || s->next[r] != b->next[r])
            fail(CHECK_NEIGHBOURS, "--tp %d --pp %d --dp %d, rank %d: got "
                 "prev %d, next %d, want %d, %d (MPI_PROC_NULL is %d)", tp,
                 pp, dp, r, s->prev[r], s->next[r], b->prev[r], b->next[r],
                 MPI_PROC_NULL);
        for (int a = 0; a < AXES; a++) {
            int want[MOST_RANKS], got[MOST_RANKS], peers[MOST_RANKS];
            char w[120], g[120];
            int nw = group_of(b, n, r, a, want);
            int ng = group_of(s, n, r, a, got);
            list(w, sizeof w, want, nw);
            if (s->colour[r][a] < 0)
                fail(CHECK_GROUP + a, "--tp %d --pp %d --dp %d, rank %d: "
                     "colour %d; MPI_Comm_split wants one of 0 or more", tp,
                     pp, dp, r, s->colour[r][a]);
            else if (ng != nw
                     || memcmp(got, want, sizeof(int) * (size_t)nw)) {
                list(g, sizeof g, got, ng);
                fail(CHECK_GROUP + a, "--tp %d --pp %d --dp %d, rank %d: its "
                     "colour %d and key %d make the group %s, want %s", tp,
                     pp, dp, r, s->colour[r][a], s->key[r][a], g, w);
            }
            for (int i = 0; i < MOST_RANKS; i++)
                peers[i] = -2;
            int np = mesh_peers(r, tp, pp, dp, (MeshAxis)a, peers);
            if (np != nw || memcmp(peers, want, sizeof(int) * (size_t)nw)) {
                list(g, sizeof g, peers, np < 0 ? 0 : np);
                fail(CHECK_PEERS + a, "--tp %d --pp %d --dp %d, rank %d: got "
                     "%s, want %s", tp, pp, dp, r, g, w);
            }
        }
    }
}

int main(void)
{
    static Layout book, student;
    for (int n = 1; n <= 48; n++)            /* every layout of 1 to 48 */
        for (int tp = 1; tp <= n; tp++)
            for (int pp = 1; tp * pp <= n; pp++)
                if (n % (tp * pp) == 0)
                    compare(tp, pp, n / (tp * pp), &book, &student);
    static const int big[][AXES] = { { 8, 4, 16 }, { 8, 16, 4 },
                                     { 1, 64, 8 }, { 4, 1, 128 } };
    for (int i = 0; i < 4; i++)
        compare(big[i][0], big[i][1], big[i][2], &book, &student);
    const char *what = "every rank of %d layouts, 1 to 512 ranks%s%s";
    char line[600];
    snprintf(line, sizeof line, what, layouts,
             failed[CHECK_COORDS][0] ? ": " : "", failed[CHECK_COORDS]);
    lab_check(!failed[CHECK_COORDS][0], "mesh_place: (tp_rank, pp_rank, "
              "dp_rank) = mesh_init's, %s", line);
    for (int a = 0; a < AXES; a++) {
        const char *f = failed[CHECK_GROUP + a];
        snprintf(line, sizeof line, what, layouts, f[0] ? ": " : "", f);
        lab_check(!f[0], "mesh_place: %s_colour and %s_key split the ranks "
                  "into mesh_init's %s groups, in its order, %s",
                  axis_names[a], axis_names[a], axis_names[a], line);
    }
    snprintf(line, sizeof line, what, layouts,
             failed[CHECK_NEIGHBOURS][0] ? ": " : "",
             failed[CHECK_NEIGHBOURS]);
    lab_check(!failed[CHECK_NEIGHBOURS][0], "mesh_place: prev and next = "
              "mesh_init's, %s", line);
    for (int a = 0; a < AXES; a++) {
        const char *f = failed[CHECK_PEERS + a];
        snprintf(line, sizeof line, what, layouts, f[0] ? ": " : "", f);
        lab_check(!f[0], "mesh_peers along %s = the members of mesh_init's "
                  "%s group, in order, %s", axis_names[a], axis_names[a],
                  line);
    }
    return lab_finish("mesh-coords");
}
