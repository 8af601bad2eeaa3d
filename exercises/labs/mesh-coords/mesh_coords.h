/* exercises/labs/mesh-coords/mesh_coords.h: the two functions of the mesh
   lab (Chapter 11), which mesh_coords.c defines. */
#ifndef MESH_COORDS_H
#define MESH_COORDS_H

#include <mpi.h>

/* Where world rank `rank` sits in a mesh of tp × pp × dp ranks, tensor
   parallelism innermost: its coordinates, the colour and key that it
   passes to MPI_Comm_split to make each axis's communicator (ranks with
   the same colour share a group, ordered by key), and its pipeline
   neighbours, the world ranks of the stages before and after its own
   (MPI_PROC_NULL at the ends). */
typedef struct {
    int tp_rank, pp_rank, dp_rank;    /* its coordinates                 */
    int tp_colour, tp_key;            /* its tensor-parallel group       */
    int pp_colour, pp_key;            /* its pipeline                    */
    int dp_colour, dp_key;            /* its data-parallel group         */
    int prev, next;                   /* its pipeline neighbours         */
} MeshPlace;

typedef enum { AXIS_TP, AXIS_PP, AXIS_DP } MeshAxis;

/* Fills *place for world rank `rank` (0 <= rank < tp·pp·dp). */
void mesh_place(int rank, int tp, int pp, int dp, MeshPlace *place);

/* Writes the world ranks of rank's group along `axis` into peers, in the
   group's order (rank 0 of the group first), and returns how many. */
int mesh_peers(int rank, int tp, int pp, int dp, MeshAxis axis,
               int *peers);
#endif
