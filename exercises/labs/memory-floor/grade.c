/* exercises/labs/memory-floor/grade.c: the autograder of the lab of
   chapter 1. It links the student's floor.c with the chapter's own
   code/fleet/memory.c and compares, over a grid of models, conventions,
   parts and usable fractions, every field of the student's floor_of with
   derive_memory_floor's, and state_bytes_of with state_bytes_per_param.
   Counts must agree exactly, bytes and fractions to a relative 1e-12. A
   failed check names the first input it failed on. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "floor.h"
#include "lab_tally.h"

#define RELATIVE 1e-12

/* Parameters: 4e9 × 16 B is one H100's usable 64 GB exactly, and 7e9 ×
   18 B one B200's at 70 % (if the rounding is forgiven); 32e9 × 16 B fills
   one node of H100s; 36e9 spills into a second. */
static const double params_grid[] = { 1e9, 4e9, 7e9, 32e9, 36e9, 70e9,
                                      100e9, 175e9, 405e9, 1e12 };
static const double bytes_grid[] = { 10, 16, 18, 20 };
static const double usable_grid[] = { 0.7, 0.8, 0.9, 1.0 };
enum { PARAMS = sizeof params_grid / sizeof params_grid[0],
       BYTES = sizeof bytes_grid / sizeof bytes_grid[0],
       USABLE = sizeof usable_grid / sizeof usable_grid[0] };

/* The fields floor_of fills in: name, where, and whether a count. */
static const struct {
    const char *name;
    size_t offset;
    int count;
} fields[] = {
    { "static_bytes", offsetof(MemoryFloor, static_bytes), 0 },
    { "node_bytes", offsetof(MemoryFloor, node_bytes), 0 },
    { "nodes_of_state", offsetof(MemoryFloor, nodes_of_state), 0 },
    { "usable_bytes", offsetof(MemoryFloor, usable_bytes), 0 },
    { "gpus_min", offsetof(MemoryFloor, gpus_min), 1 },
    { "nodes", offsetof(MemoryFloor, nodes), 1 },
    { "gpus_whole_nodes", offsetof(MemoryFloor, gpus_whole_nodes), 1 },
};
enum { FIELDS = sizeof fields / sizeof fields[0] };

static double field(const MemoryFloor *m, int f)
{
    return *(const double *)((const char *)m + fields[f].offset);
}

static int agrees(double got, double want, int count)
{
    return count ? got == want : lab_close(got, want, RELATIVE);
}

/* The book's floor and the student's for one input. */
static void both_floors(double params, double bytes, const Gpu *g,
                        double usable, MemoryFloor *book,
                        MemoryFloor *student)
{
    MemoryFloor given = { .params = params, .bytes_per_param = bytes,
                          .gpu = g, .usable = usable };
    *book = given, *student = given;
    derive_memory_floor(book);
    floor_of(student);
}

/* One check per field over the whole grid. */
static void check_grid(void)
{
    LabTally tallies[FIELDS] = { { 0, 0, "" } };
    for (const Gpu *g = first_gpu(); g != NULL; g = next_gpu(g))
        for (int p = 0; p < PARAMS; p++)
            for (int b = 0; b < BYTES; b++)
                for (int u = 0; u < USABLE; u++) {
                    MemoryFloor book, student;
                    both_floors(params_grid[p], bytes_grid[b], g,
                                usable_grid[u], &book, &student);
                    for (int f = 0; f < FIELDS; f++) {
                        double got = field(&student, f);
                        double want = field(&book, f);
                        lab_tally(&tallies[f],
                                  agrees(got, want, fields[f].count),
                                  "%g params, %g B each, %s, usable %g: "
                                  "got %.17g, want %.17g", params_grid[p],
                                  bytes_grid[b], g->key, usable_grid[u], got,
                                  want);
                    }
                }
    for (int f = 0; f < FIELDS; f++) {
        char what[64];
        snprintf(what, sizeof what, "floor_of: %s", fields[f].name);
        lab_tally_check(&tallies[f], what);
    }
}

/* The three cases the chapter dwells on, each a check of its own. */
static void check_edge(const char *what, double params, double bytes,
                       const char *gpu, double usable)
{
    const Gpu *g = first_gpu();
    while (g != NULL && strcmp(g->key, gpu) != 0)
        g = next_gpu(g);
    MemoryFloor book, student;
    both_floors(params, bytes, g, usable, &book, &student);
    int ok = student.gpus_min == book.gpus_min
          && student.gpus_whole_nodes == book.gpus_whole_nodes;
    lab_check(ok, "%s: %g params × %g B on %s at %g: GPUs %g, in whole "
              "nodes %g (want %g, %g)", what, params, bytes, gpu, usable,
              student.gpus_min, student.gpus_whole_nodes, book.gpus_min,
              book.gpus_whole_nodes);
}

static void check_conventions(void)
{
    const StateBytes kinds[] = {
        *mixed_precision_adam(),
        { "fp32", "fp32 Adam", 4, 4, 0, 0, 8 },
        { "lean", "bf16 weights + fp32 moments", 2, 0, 0, 0, 8 },
        { "mt-nlg", "both gradient copies", 2, 2, 4, 4, 8 },
        { "8-bit", "8-bit Adam moments", 2, 2, 4, 0, 2 },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        double got = state_bytes_of(&kinds[i]);
        double want = state_bytes_per_param(&kinds[i]);
        lab_check(got == want, "state_bytes_of: %s (%g, %g, %g, %g, %g): "
                  "%g B, want %g", kinds[i].name, kinds[i].weights,
                  kinds[i].gradients, kinds[i].master_weights,
                  kinds[i].master_gradients, kinds[i].optimizer, got, want);
    }
}

int main(void)
{
    printf("lab memory-floor: the student's floor against "
           "code/fleet/memory.c\n");
    check_conventions();
    check_grid();
    /* 126 GB of state in 180 GB × 0.7, which is 126 GB but for rounding */
    check_edge("exactly one card", 7e9, 18, "b200", 0.7);
    check_edge("part of a node", 20e9, 16, "h100", 0.8);
    check_edge("just past one node", 36e9, 16, "h100", 0.8);
    return lab_finish("memory-floor");
}
