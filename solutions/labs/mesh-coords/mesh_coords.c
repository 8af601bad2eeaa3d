/* solutions/labs/mesh-coords/mesh_coords.c: the model solution of the
   mesh lab (Chapter 11). */
#include "mesh_coords.h"

void mesh_place(int rank, int tp, int pp, int dp, MeshPlace *place)
{
    (void)dp;                 /* the outermost axis: what is left over */
    int t = rank % tp, p = rank / tp % pp, d = rank / (tp * pp);
    /* a group is the ranks that agree on the other two coordinates, and
       its order is the coordinate along its own axis */
    *place = (MeshPlace){ .tp_rank = t, .pp_rank = p, .dp_rank = d,
                          .tp_colour = p + pp * d, .tp_key = t,
                          .pp_colour = t + tp * d, .pp_key = p,
                          .dp_colour = t + tp * p, .dp_key = d,
                          .prev = p > 0 ? rank - tp : MPI_PROC_NULL,
                          .next = p < pp - 1 ? rank + tp : MPI_PROC_NULL };
}

int mesh_peers(int rank, int tp, int pp, int dp, MeshAxis axis,
               int *peers)
{
    /* the stride of each axis in world ranks: 1, tp, tp·pp */
    int stride = axis == AXIS_TP ? 1 : axis == AXIS_PP ? tp : tp * pp;
    int size = axis == AXIS_TP ? tp : axis == AXIS_PP ? pp : dp;
    int first = rank - (rank / stride % size) * stride;
    for (int i = 0; i < size; i++)
        peers[i] = first + i * stride;
    return size;
}
