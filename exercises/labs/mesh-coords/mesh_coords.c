/* exercises/labs/mesh-coords/mesh_coords.c: where a rank sits in the 3D
   mesh (Chapter 11). Replace each TODO; mesh_coords.h gives the
   contracts, README.md the lab. */
#include "mesh_coords.h"

void mesh_place(int rank, int tp, int pp, int dp, MeshPlace *place)
{
    /* TODO: the coordinates, tensor parallelism innermost; each axis's
       colour and key; the pipeline neighbours. */
    (void)rank;
    (void)tp;
    (void)pp;
    (void)dp;
    *place = (MeshPlace){ .prev = MPI_PROC_NULL, .next = MPI_PROC_NULL };
}

int mesh_peers(int rank, int tp, int pp, int dp, MeshAxis axis,
               int *peers)
{
    /* TODO: the world ranks that share rank's group along axis. */
    (void)rank;
    (void)tp;
    (void)pp;
    (void)dp;
    (void)axis;
    (void)peers;
    return 0;
}
