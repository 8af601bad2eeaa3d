/* exercises/labs/router/router.h: the four functions of the router lab
   (Chapter 14), which router.c defines. A slot is one of a token's k
   choices: token i's j-th choice is slot i k + j. */
#ifndef ROUTER_H
#define ROUTER_H

/* Routes n tokens among E experts from their router scores (n, E): a
   softmax over each token's E scores, then its k most probable experts,
   best first (of two equally probable, the lower number first), into
   expert (n, k); their probabilities, renormalised to sum to 1 over the
   k, into gate (n, k); and the slots each expert was chosen for into
   routed (E), which it sets. 1 <= k <= E. */
void route_top_k(const float *scores, int n, int E, int k, int *expert,
                 float *gate, long *routed);

/* The slots each expert keeps: the capacity factor F times the slots it
   would get if k N R token-slots (N tokens on each of R ranks) were spread
   evenly over E experts, rounded up; a product within a relative 1e-9 of
   a whole number counts as that number. */
long capacity_slots(int k, int tokens, int ranks, int E, double factor);

/* Rank `rank`'s before (E): the slots that the tokens of ranks 0 to
   rank - 1 sent to each expert, from every rank's routed (R, E). */
void slots_before(const long *routed, int R, int E, int rank,
                  long *before);

/* Which of n tokens' slots their experts keep, in the order of the
   tokens, then of their choices, after before[e] slots that earlier
   tokens sent to expert e: kept (n, k) is 1 for a slot within its
   expert's capacity, 0 for one dropped. Returns the slots dropped. */
long keep_slots(const int *expert, int n, int k, int E, const long *before,
                long capacity, int *kept);
#endif
